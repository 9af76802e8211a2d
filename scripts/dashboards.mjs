// `npm run dashboards`: the shipped alert rules and scrape jobs without Docker. Runs the installed
// Prometheus (Debian's `prometheus` package, or PROMETHEUS_PATH) against the API and workers `npm start`
// runs, with deploy/prometheus/flash-sale.rules.yml, and prints the pages that work for the installed
// version (Prometheus 2.x before the new UI serves its pages under /classic/). Ctrl-C stops it.
//
//   npm run dashboards                                   # API on :3000, workers on :9464…
//   npm run dashboards -- --api http://127.0.0.1:3001 --worker 127.0.0.1:9470
//   npm run dashboards -- --check                        # print the state once, then stop (scripts, CI)
//   METRICS_TOKEN=… npm run dashboards                   # when the apps run with a metrics token
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCommandLine } from './lib/cli.mjs';
import { freePort, portIsFree } from './lib/ports.mjs';
import { shortPath, spawnServer, waitForReady } from './lib/processes.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RULES_FILE = path.join(ROOT, 'deploy', 'prometheus', 'flash-sale.rules.yml');
/** Where `npm start` puts the first worker's metrics, and how many more ports up its others may be. */
const FIRST_WORKER_PORT = Number(process.env.WORKER_METRICS_PORT ?? 9464);
const WORKER_PORTS_PROBED = 8;

const USAGE = `Usage: npm run dashboards -- [options]
  --api URL        the API (http://127.0.0.1:$PORT|3000); with several API processes, their one port
  --worker HOST:PORT
                   a worker's metrics endpoint; repeat for each (default: whichever of
                   127.0.0.1:${FIRST_WORKER_PORT}…${FIRST_WORKER_PORT + WORKER_PORTS_PROBED - 1} answer)
  --port N         Prometheus's port (9090, or a free one when taken)
  --data DIR       Prometheus's data folder (.data/prometheus)
  --check          print the targets, rules and pages once, then stop Prometheus
  --help           this text
PROMETHEUS_PATH names the binary; METRICS_TOKEN is sent as the bearer token when set.`;

const { values } = parseCommandLine({
  name: 'dashboards',
  usage: USAGE,
  options: {
    api: { type: 'string', default: `http://127.0.0.1:${process.env.PORT ?? 3000}` },
    worker: { type: 'string', multiple: true },
    port: { type: 'string' },
    data: { type: 'string', default: path.join(ROOT, '.data', 'prometheus') },
    check: { type: 'boolean', default: false },
  },
});

const token = process.env.METRICS_TOKEN;
const headers = token ? { authorization: `Bearer ${token}` } : {};

/** Whether `GET http://address/metrics` answers 200: a target Prometheus can scrape. */
async function metricsAnswer(address) {
  try {
    const response = await fetch(`http://${address}/metrics`, {
      headers,
      signal: globalThis.AbortSignal.timeout(2_000),
    });
    return response.status === 200;
  } catch {
    return false;
  }
}

/** PROMETHEUS_PATH when set, else `prometheus` on the PATH (Debian's package puts it in /usr/bin). */
function findPrometheus() {
  if (process.env.PROMETHEUS_PATH) return existsSync(process.env.PROMETHEUS_PATH) ? process.env.PROMETHEUS_PATH : null;
  const onPath = (process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, 'prometheus'));
  return onPath.find((candidate) => existsSync(candidate)) ?? null;
}

const binary = findPrometheus();
if (!binary) {
  console.error(
    process.env.PROMETHEUS_PATH
      ? `No Prometheus at PROMETHEUS_PATH=${process.env.PROMETHEUS_PATH}. Get it with one of:`
      : 'Prometheus is not installed here (no prometheus on the PATH). Get it with one of:',
  );
  console.error('  Debian/Ubuntu:  sudo apt-get install prometheus   (its service need not run)');
  console.error('  macOS:          brew install prometheus');
  console.error('  any system:     https://prometheus.io/download/ — then set PROMETHEUS_PATH');
  process.exit(1);
}

const api = new URL(values.api).host;
if (!(await metricsAnswer(api))) {
  console.error(
    `Nothing answers at http://${api}/metrics${token ? ' with METRICS_TOKEN' : ''}: start the app first ` +
      '(npm start, in another terminal), or name it with --api.',
  );
  process.exit(2);
}
const workers = values.worker ?? [];
if (workers.length === 0) {
  for (let port = FIRST_WORKER_PORT; port < FIRST_WORKER_PORT + WORKER_PORTS_PROBED; port++) {
    if (await metricsAnswer(`127.0.0.1:${port}`)) workers.push(`127.0.0.1:${port}`);
  }
}

const dataDir = path.resolve(values.data);
mkdirSync(dataDir, { recursive: true });
const authorization = token
  ? (writeFileSync(path.join(dataDir, 'metrics-token'), token, { mode: 0o600 }), true)
  : false;
const job = (name, targets) => ({
  job_name: name,
  ...(authorization ? { authorization: { credentials_file: path.join(dataDir, 'metrics-token') } } : {}),
  static_configs: [{ targets }],
});
// The compose stack's jobs (deploy/prometheus/prometheus.yml) with fixed addresses instead of Docker's
// DNS: the same job names, which the rules and the dashboard select on. JSON is YAML.
const config = {
  global: { scrape_interval: '5s', evaluation_interval: '5s' },
  rule_files: [RULES_FILE],
  scrape_configs: [job('flash-sale-api', [api]), ...(workers.length > 0 ? [job('flash-sale-worker', workers)] : [])],
};
const configFile = path.join(dataDir, 'prometheus.yml');
writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);

const port = values.port ? Number(values.port) : (await portIsFree(9090)) ? 9090 : await freePort();
const base = `http://127.0.0.1:${port}`;
const prometheus = spawnServer(
  'prometheus',
  binary,
  [
    `--config.file=${configFile}`,
    `--storage.tsdb.path=${path.join(dataDir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
  ],
  path.join(dataDir, 'prometheus.log'),
  (name, code, signal) => {
    console.error(`Prometheus exited (${code ?? signal}); see ${shortPath(path.join(dataDir, 'prometheus.log'))}`);
    process.exit(1);
  },
);
const stop = async () => {
  await prometheus.stop();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

const ready = async () => {
  try {
    return (await fetch(`${base}/-/ready`)).status === 200;
  } catch {
    return false;
  }
};
try {
  await waitForReady(prometheus, ready, 30_000);
} catch (error) {
  console.error(error.message);
  process.exit(1);
}

const getJson = async (route) => (await (await fetch(`${base}${route}`)).json()).data;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Each target is scraped within a scrape interval of Prometheus finding it: wait that long for a verdict.
let targets = [];
for (let waited = 0; waited < 20_000; waited += 500) {
  targets = (await getJson('/api/v1/targets')).activeTargets;
  if (targets.length > 0 && targets.every((target) => target.health !== 'unknown')) break;
  await sleep(500);
}
const groups = (await getJson('/api/v1/rules')).groups;
const rules = groups.flatMap((group) => group.rules);
const version = (await getJson('/api/v1/status/buildinfo')).version;
// The new UI (3.x) serves /alerts; 2.x's React UI before it answers 404 there and has them under /classic/.
const classic = (await fetch(`${base}/alerts`)).status !== 200;
const page = (name) => `${base}${classic ? '/classic' : ''}/${name}`;

const allUp = targets.length > 0 && targets.every((target) => target.health === 'up');
console.log(`Prometheus ${version} on ${base} (data in ${shortPath(dataDir)})`);
console.log('  targets');
for (const target of targets) {
  const why = target.health === 'up' ? '' : ` — ${target.lastError || 'not scraped yet'}`;
  console.log(`    ${target.labels.job} ${target.labels.instance} ${target.health}${why}`);
}
if (workers.length === 0)
  console.log(`    no worker answers on 127.0.0.1:${FIRST_WORKER_PORT}…: name them with --worker`);
console.log(
  `  rules    ${groups.length} groups: ${rules.filter((rule) => rule.type === 'recording').length} recording, ` +
    `${rules.filter((rule) => rule.type === 'alerting').length} alerts (from ${shortPath(RULES_FILE)})`,
);
console.log(`  alerts   ${page('alerts')}`);
console.log(`  targets  ${page('targets')}`);
console.log(`  graph    ${page('graph')}`);
console.log(`  charts without Grafana: each sale's page in the admin console, http://${api}/admin`);

if (values.check) {
  await prometheus.stop();
  process.exit(allUp && rules.length > 0 ? 0 : 1);
}
console.log('Ctrl-C stops Prometheus.');
