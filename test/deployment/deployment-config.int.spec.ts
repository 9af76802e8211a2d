import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '@flash-sale/config';
import { load } from 'js-yaml';

const ROOT = join(__dirname, '..', '..');
/** Debian's haproxy (`.ci/run` installs it); HAPROXY_PATH points at another binary. */
const HAPROXY_PATH = process.env['HAPROXY_PATH'] ?? '/usr/sbin/haproxy';

interface ComposeService {
  image?: string;
  command?: string[];
  profiles?: string[];
  ports?: string[];
  volumes?: string[];
  deploy?: { replicas?: string | number };
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string; required?: boolean }>;
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  networks: { default: { ipam: { config: { subnet: string }[] } } };
}

/** `${NAME:-default}` → default: what compose uses when the variable is unset. */
function defaultOf(value: string | number | undefined): string {
  const text = String(value);
  return /^\$\{[A-Z_]+:-(.*)\}$/.exec(text)?.[1] ?? text;
}

/**
 * docker-compose.yml and deploy/haproxy.cfg as docs/operations.md ("Running on several machines")
 * describes them — there is no Docker daemon to run them here, so their shape is checked: the API and
 * the worker as replicas behind HAProxy, which finds the API's replicas in Docker's DNS and
 * health-checks them on /health/ready; the API trusting the compose network's forwarded headers; the
 * redis-cluster profile's six nodes, the one-shot that forms 3 masters with a replica each, and the app
 * waiting for it. HAProxy itself checks its file (Debian's haproxy; .ci/run installs it).
 */
describe('the compose deployment: replicas behind a load balancer, and the redis-cluster profile', () => {
  const compose = load(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as ComposeFile;
  const haproxy = readFileSync(join(ROOT, 'deploy', 'haproxy.cfg'), 'utf8');
  const { api, worker, lb } = compose.services;

  it('runs the API and the worker as replicas (API_REPLICAS, WORKER_REPLICAS, 2 each) behind the balancer', () => {
    expect(api?.deploy?.replicas).toBe('${API_REPLICAS:-2}');
    expect(worker?.deploy?.replicas).toBe('${WORKER_REPLICAS:-2}');
    // Replicas cannot share a published port: only the balancer publishes 3000.
    expect(api?.ports).toBeUndefined();
    expect(lb?.image).toMatch(/^haproxy:/);
    expect(lb?.ports).toEqual(['${BIND_ADDRESS:-127.0.0.1}:${PORT:-3000}:3000']);
    expect(lb?.volumes).toContain('./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro');
    expect(compose.services['k6']?.environment?.['BASE_URL']).toBe('http://lb:3000');
  });

  it('trusts forwarded headers from the compose network only, a range the API accepts', () => {
    const subnet = defaultOf(compose.networks.default.ipam.config[0]?.subnet);
    expect(subnet).toMatch(/^\d+\.\d+\.\d+\.\d+\/\d+$/);
    expect(defaultOf(api?.environment?.['TRUST_PROXY'])).toBe(subnet);
    expect(loadConfig({ TRUST_PROXY: subnet }).http.trustProxy).toEqual([subnet]);
    expect(api?.environment?.['HOST']).toBe('0.0.0.0');
  });

  it('HAProxy finds the api service in Docker’s DNS and sends only to replicas ready on /health/ready', () => {
    expect(haproxy).toMatch(/^resolvers docker$/m);
    expect(haproxy).toMatch(/^\s+nameserver \S+ 127\.0\.0\.11:53$/m);
    expect(haproxy).toMatch(/^\s+bind :3000$/m);
    expect(haproxy).toMatch(/^\s+option forwardfor$/m);
    // The API believes this network's X-Forwarded-For: a client's own must not get through.
    expect(haproxy).toMatch(/^\s+http-request del-header X-Forwarded-For$/m);
    expect(haproxy).toMatch(/^\s+http-check send meth GET uri \/health\/ready$/m);
    expect(haproxy).toMatch(/^\s+http-check expect status 200$/m);
    const template = /^\s+server-template \S+ 1-(\d+) api:3000 (.*)$/m.exec(haproxy);
    expect(template).not.toBeNull();
    expect(template![2]).toMatch(/\bcheck\b.*\bresolvers docker\b/);
    // Enough slots for the default replicas and then some.
    expect(Number(template![1])).toBeGreaterThanOrEqual(2 * Number(defaultOf(api?.deploy?.replicas)));
  });

  it('haproxy -c accepts the configuration', () => {
    if (!existsSync(HAPROXY_PATH)) {
      throw new Error(
        `No HAProxy at ${HAPROXY_PATH}: install it (apt-get install -y --no-install-recommends haproxy, as .ci/run does) or set HAPROXY_PATH`,
      );
    }
    const check = execFileSync(HAPROXY_PATH, ['-c', '-f', join(ROOT, 'deploy', 'haproxy.cfg')], { encoding: 'utf8' });
    expect(check).toMatch(/Configuration file is valid/);
  });

  it('the redis-cluster profile: six AOF nodes, a one-shot forming 3 masters + 3 replicas, the app waiting for it', () => {
    const nodes = Object.entries(compose.services).filter(([name]) => /^redis-node-\d+$/.test(name));
    expect(nodes).toHaveLength(6);
    for (const [, node] of nodes) {
      expect(node.profiles).toEqual(['redis-cluster']);
      expect(node.command?.join(' ')).toMatch(/--cluster-enabled yes/);
      expect(node.command?.join(' ')).toMatch(/--appendonly yes/);
    }
    const create = compose.services['redis-cluster-create'];
    expect(create?.profiles).toEqual(['redis-cluster']);
    const script = create?.command?.join(' ') ?? '';
    expect(script).toMatch(/--cluster create/);
    expect(script).toMatch(/--cluster-replicas 1 --cluster-yes/);
    for (const [name] of nodes) expect(script).toContain(`${name}:6379`);
    // The app uses the cluster when REDIS_CLUSTER_NODES is set, and waits for it only with the profile.
    for (const service of [api, worker]) {
      expect(service?.environment?.['REDIS_CLUSTER_NODES']).toBe('${REDIS_CLUSTER_NODES:-}');
      expect(service?.depends_on?.['redis-cluster-create']).toEqual({
        condition: 'service_completed_successfully',
        required: false,
      });
    }
    // The documented command's node list is valid configuration naming the profile's nodes.
    const documented = /REDIS_CLUSTER_NODES=(\S+) docker compose up/.exec(
      readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'),
    );
    const clusterNodes = loadConfig({ REDIS_CLUSTER_NODES: documented![1] }).redis.clusterNodes;
    expect(clusterNodes.length).toBeGreaterThanOrEqual(3);
    for (const node of clusterNodes) expect(compose.services[node.split(':')[0]!]?.profiles).toEqual(['redis-cluster']);
  });
});
