import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { exited } from './child-process';
import { waitFor } from './fixtures';
import { freePort } from '../../scripts/lib/ports.mjs';

/** Debian's haproxy (`.ci/run` installs it); HAPROXY_PATH points elsewhere. */
export const HAPROXY_PATH = process.env['HAPROXY_PATH'] ?? '/usr/sbin/haproxy';

/** The response header naming the backend server that answered (set by the load balancer). */
export const SERVED_BY_HEADER = 'x-served-by';

export interface LoadBalancer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * The HAProxy configuration: round robin over the APIs, each checked on `/health/ready` every second
 * (down after 2 failures, up after 2 successes). A request is sent elsewhere only when its connection
 * could not be opened (`retry-on conn-failure`, HAProxy's default), never once it reached an API: a
 * purchase that died with its API is the buyer's to replay with the same token, as the contract says.
 */
export function haproxyConfig(port: number, backendPorts: readonly number[]): string {
  return [
    'global',
    '  maxconn 4096',
    '  nbthread 1',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    // deploy/haproxy.cfg's: an idle client connection outlives the API's `keep-alive: timeout=65` hint,
    // which HAProxy passes on. Shorter, it would close connections the client still counts on, and a
    // request sent as the close arrives fails with "other side closed".
    '  timeout client 65s',
    '  timeout server 65s',
    '  timeout http-keep-alive 65s',
    // A loaded API answers its check late, not never: a short timeout would take it out mid-burst.
    '  timeout check 3s',
    '  retries 3',
    '  option redispatch',
    'frontend buyers',
    `  bind 127.0.0.1:${port}`,
    '  default_backend apis',
    'backend apis',
    '  balance roundrobin',
    '  option httpchk GET /health/ready',
    '  http-check expect status 200',
    `  http-response set-header ${SERVED_BY_HEADER} %s`,
    ...backendPorts.map((backend, i) => `  server api-${i + 1} 127.0.0.1:${backend} check inter 1s fall 2 rise 2`),
    '',
  ].join('\n');
}

/** HAProxy (`haproxy -f cfg -db`, in the foreground as a child process) on a free port in front of the APIs. */
export async function startLoadBalancer(backendPorts: readonly number[]): Promise<LoadBalancer> {
  const dir = mkdtempSync(join(tmpdir(), 'fs-haproxy-'));
  const port = await freePort();
  const configFile = join(dir, 'haproxy.cfg');
  writeFileSync(configFile, haproxyConfig(port, backendPorts));
  // A configuration error is reported here, in words, rather than as a child that exits at once.
  execFileSync(HAPROXY_PATH, ['-c', '-q', '-f', configFile], { stdio: 'pipe' });
  const child: ChildProcess = spawn(HAPROXY_PATH, ['-f', configFile, '-db'], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(`[haproxy ${child.pid}] ${chunk.toString()}`));
  const stop = async () => {
    child.kill('SIGKILL');
    await exited(child);
    rmSync(dir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      'HAProxy to forward requests',
      async () => {
        try {
          const response = await request(`${url}/health`);
          await response.body.dump();
          return response.statusCode;
        } catch {
          return 0;
        }
      },
      (status) => status === 200,
      15_000,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, port, stop };
}
