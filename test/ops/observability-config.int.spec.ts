import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { loadConfig } from '@flash-sale/config';
import { dump } from 'js-yaml';
import {
  DASHBOARD_FILE,
  dashboardPanels,
  dashboardQueries,
  GRAFANA_DIR,
  loadDashboard,
  loadRules,
  PROMETHEUS_CONFIG,
  PROMETHEUS_DIR,
  type PrometheusConfig,
  PROMTOOL_PATH,
  readYaml,
  requireBinary,
  ROOT,
  RULES_FILE,
  RULES_TEST_FILE,
  type RuleUnitTests,
  selectedSeries,
} from '../support/observability';

interface ComposeService {
  image?: string;
  profiles?: string[];
  entrypoint?: string[];
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  tmpfs?: string[];
  ports?: string[];
}

const compose = readYaml<{ services: Record<string, ComposeService> }>(join(ROOT, 'docker-compose.yml'));
const prometheusConfig = readYaml<PrometheusConfig>(PROMETHEUS_CONFIG);
const JOBS = { api: 'flash-sale-api', worker: 'flash-sale-worker' };

/** `host:container[:ro]` bind mounts of a compose service, host side resolved from the repository. */
function bindMounts(service: ComposeService | undefined): Map<string, string> {
  return new Map(
    (service?.volumes ?? [])
      .filter((volume) => volume.startsWith('./'))
      .map((volume) => {
        const [host, container] = volume.split(':');
        return [container!, join(ROOT, host!)];
      }),
  );
}

/** The host file behind a path inside a container, through its bind mounts. */
function hostPathOf(service: ComposeService | undefined, containerPath: string): string | undefined {
  for (const [container, host] of bindMounts(service)) {
    const relative = posix.relative(container, containerPath);
    if (!relative.startsWith('..') && !posix.isAbsolute(relative)) return join(host, relative);
  }
  return undefined;
}

function promtool(args: string[]): { status: number | null; output: string } {
  const run = spawnSync(requireBinary(PROMTOOL_PATH, 'PROMTOOL_PATH'), args, { encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/**
 * The observability profile of docker-compose.yml and its files in deploy/ (docs/operations.md,
 * "Dashboards and alerts"), checked without Docker: the compose wiring by shape, Prometheus's
 * configuration and rules by the real `promtool` (Debian's prometheus package; .ci/run installs it),
 * the rules' behaviour by their unit tests, and the dashboard's PromQL by Prometheus's grammar.
 * test/ops/observability-scrape.int.spec.ts checks the series they name against a running API and worker.
 */
describe('the observability profile: Prometheus, its rules and Grafana as code', () => {
  const { prometheus, grafana, api, worker } = compose.services;

  it('runs Prometheus and Grafana only with COMPOSE_PROFILES=observability, published on loopback', () => {
    expect(prometheus?.profiles).toEqual(['observability']);
    expect(grafana?.profiles).toEqual(['observability']);
    expect(prometheus?.image).toMatch(/^prom\/prometheus:v\d+\.\d+\.\d+$/);
    expect(grafana?.image).toMatch(/^grafana\/grafana:\d+\.\d+\.\d+$/);
    expect(prometheus?.ports).toEqual(['${BIND_ADDRESS:-127.0.0.1}:${PROMETHEUS_PORT:-9090}:9090']);
    expect(grafana?.ports).toEqual(['${BIND_ADDRESS:-127.0.0.1}:${GRAFANA_PORT:-3001}:3000']);
    // Every file the two services mount exists in the repository.
    for (const service of [prometheus, grafana]) {
      for (const host of bindMounts(service).values()) expect(existsSync(host)).toBe(true);
    }
    expect(hostPathOf(prometheus, '/etc/prometheus/prometheus.yml')).toBe(PROMETHEUS_CONFIG);
  });

  it('scrapes every API and worker replica on its own address, by Docker DNS, with the METRICS_TOKEN bearer', () => {
    const jobs = new Map(prometheusConfig.scrape_configs.map((job) => [job.job_name, job]));
    expect([...jobs.keys()].sort()).toEqual([JOBS.api, JOBS.worker]);
    // The ports the apps listen on in compose: the API's PORT, the worker's default WORKER_METRICS_PORT.
    expect(jobs.get(JOBS.api)?.dns_sd_configs).toEqual([
      expect.objectContaining({ names: ['api'], type: 'A', port: Number(api?.environment?.['PORT']) }),
    ]);
    expect(jobs.get(JOBS.worker)?.dns_sd_configs).toEqual([
      expect.objectContaining({ names: ['worker'], type: 'A', port: loadConfig({}).ops.workerMetricsPort }),
    ]);
    // The worker's metrics endpoint listens on HOST: beyond loopback, or Prometheus cannot reach it.
    expect(worker?.environment?.['HOST']).toBe('0.0.0.0');
    expect(api?.environment?.['HOST']).toBe('0.0.0.0');

    // The token: the same variable as the apps', written at start to the file both jobs send, in a tmpfs.
    expect(prometheus?.environment?.['METRICS_TOKEN']).toBe(api?.environment?.['METRICS_TOKEN']);
    const tokenFiles = new Set([...jobs.values()].map((job) => job.authorization?.credentials_file));
    expect(tokenFiles.size).toBe(1);
    const [tokenFile] = [...tokenFiles];
    expect(tokenFile).toMatch(/^\//);
    const startup = prometheus?.entrypoint?.join(' ') ?? '';
    expect(startup).toContain(`printf '%s' "$$METRICS_TOKEN" > ${tokenFile}`);
    expect(startup).toMatch(/exec \/bin\/prometheus "\$\$@"/);
    expect(prometheus?.tmpfs?.map((mount) => mount.split(':')[0])).toEqual([posix.dirname(tokenFile!)]);
  });

  it('promtool check config accepts the configuration and its rule file', () => {
    // Prometheus's file as it is, but for the token file, which exists only inside the container.
    const dir = mkdtempSync(join(tmpdir(), 'fs-promtool-'));
    try {
      cpSync(PROMETHEUS_DIR, dir, { recursive: true });
      const tokenFile = join(dir, 'metrics-token');
      writeFileSync(tokenFile, 'a-token', { mode: 0o600 });
      const config = structuredClone(prometheusConfig);
      for (const job of config.scrape_configs) job.authorization = { credentials_file: tokenFile };
      writeFileSync(join(dir, 'prometheus.yml'), dump(config));
      const check = promtool(['check', 'config', join(dir, 'prometheus.yml')]);
      expect(check.output).toMatch(/SUCCESS: 1 rule files found/);
      expect(check.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(prometheusConfig.rule_files.map((file) => join(PROMETHEUS_DIR, file))).toEqual([RULES_FILE]);
  });

  it('promtool check rules, then promtool test rules: every alert fires on its bad series and stays quiet on the good', () => {
    const check = promtool(['check', 'rules', RULES_FILE]);
    expect(check.output).toMatch(/SUCCESS: \d+ rules found/);
    expect(check.status).toBe(0);
    const unitTests = promtool(['test', 'rules', RULES_TEST_FILE]);
    expect(unitTests.output).toMatch(/SUCCESS/);
    expect(unitTests.status).toBe(0);
  });

  it('has a unit test for every rule: each alert a firing case and a quiet case on its own series, each recording rule evaluated', () => {
    const { recording, alerts } = loadRules();
    const unitTests = readYaml<RuleUnitTests>(RULES_TEST_FILE);
    expect(unitTests.rule_files.map((file) => join(PROMETHEUS_DIR, file))).toEqual([RULES_FILE]);
    expect(alerts.length).toBeGreaterThanOrEqual(8);

    const missing: string[] = [];
    for (const rule of alerts) {
      const readsSeries = selectedSeries(rule.expr);
      const cases = unitTests.tests.flatMap((test) =>
        (test.alert_rule_test ?? [])
          .filter((alertTest) => alertTest.alertname === rule.alert)
          .map((alertTest) => ({
            fires: alertTest.exp_alerts.length > 0,
            // A quiet case proves something only if its input holds series the rule reads.
            feedsRule: test.input_series.some((input) => readsSeries.has(input.series.split('{')[0]!)),
          })),
      );
      if (!cases.some((testCase) => testCase.fires)) missing.push(`${rule.alert}: no case where it fires`);
      if (!cases.some((testCase) => !testCase.fires && testCase.feedsRule)) {
        missing.push(`${rule.alert}: no case on its own series where it stays quiet`);
      }
      // Operators read what each alert means and what to do in docs/operations.md.
      expect(rule.labels?.['severity']).toMatch(/^(critical|warning)$/);
      expect(rule.annotations?.['summary']).toBeTruthy();
      expect(rule.annotations?.['description']).toBeTruthy();
    }
    for (const rule of recording) {
      const evaluated = unitTests.tests.some((test) =>
        (test.promql_expr_test ?? []).some(
          (exprTest) => selectedSeries(exprTest.expr).has(rule.record) && exprTest.exp_samples.length > 0,
        ),
      );
      if (!evaluated) missing.push(`${rule.record}: no promql_expr_test evaluates it`);
    }
    expect(missing).toEqual([]);
  });

  it('docs/operations.md explains every alert', () => {
    const operations = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
    const undocumented = loadRules()
      .alerts.map((rule) => rule.alert)
      .filter((name) => !new RegExp(`^\\| \`${name}\` +\\|`, 'm').test(operations));
    expect(undocumented).toEqual([]);
  });

  it('provisions Grafana: the compose Prometheus as data source, the dashboard from the repository', () => {
    const datasources = readYaml<{ datasources: { uid: string; type: string; url: string; isDefault?: boolean }[] }>(
      join(GRAFANA_DIR, 'provisioning', 'datasources', 'prometheus.yml'),
    ).datasources;
    expect(datasources).toEqual([
      expect.objectContaining({ type: 'prometheus', url: 'http://prometheus:9090', isDefault: true }),
    ]);
    const providers = readYaml<{ providers: { type: string; options: { path: string } }[] }>(
      join(GRAFANA_DIR, 'provisioning', 'dashboards', 'flash-sale.yml'),
    ).providers;
    expect(providers).toHaveLength(1);
    // The provider's folder inside the container is the repository's dashboards folder.
    expect(hostPathOf(grafana, posix.join(providers[0]!.options.path, 'flash-sale.json'))).toBe(DASHBOARD_FILE);
    expect(hostPathOf(grafana, grafana?.environment?.['GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH'] ?? '')).toBe(
      DASHBOARD_FILE,
    );
    expect(hostPathOf(grafana, '/etc/grafana/provisioning/datasources/prometheus.yml')).toBeDefined();
  });

  it('the dashboard: every panel on the chosen Prometheus, laid out without overlap, its PromQL well-formed', () => {
    const dashboard = loadDashboard();
    expect(dashboard.uid).toBe('flash-sale');
    expect(dashboard.templating.list).toEqual([
      expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }),
    ]);
    const panels = dashboardPanels(dashboard).filter((panel) => panel.type !== 'row');
    const cells = new Map<string, string>();
    for (const panel of panels) {
      expect(panel.datasource?.uid).toBe('${datasource}');
      expect(panel.targets?.length).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) expect(target.datasource?.uid).toBe('${datasource}');
      const { x, y, w, h } = panel.gridPos;
      expect(x + w).toBeLessThanOrEqual(24);
      for (let row = y; row < y + h; row++) {
        for (let column = x; column < x + w; column++) {
          const taken = cells.get(`${row}:${column}`);
          if (taken) throw new Error(`Panels "${taken}" and "${panel.title}" overlap`);
          cells.set(`${row}:${column}`, panel.title);
        }
      }
    }
    const queries = dashboardQueries(dashboard);
    for (const { expr } of queries) expect(selectedSeries(expr).size).toBeGreaterThan(0);
    // What operators asked of it: the funnel, outcomes, latency, the hand-off, stock integrity, dependencies.
    const read = new Set(queries.flatMap(({ expr }) => [...selectedSeries(expr)]));
    for (const series of [
      'flash_sale:purchases_arrived:sum',
      'flash_sale:purchases_reserved:sum',
      'flash_sale:orders_written:sum',
      'flash_sale:orders_paid:sum',
      'flash_sale_purchases_total',
      'flash_sale_reservation_script_seconds_bucket',
      'flash_sale_order_creation_seconds_bucket',
      'flash_sale:handoff_backlog:sum',
      'flash_sale:orders_written:rate1m',
      'flash_sale_stock_drift',
      'flash_sale_oversold_peak_units',
      'flash_sale_dependency_up',
      'flash_sale_redis_aof_enabled',
    ]) {
      expect(read).toContain(series);
    }
  });

  it('a broken rule file fails promtool (the check can fail)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fs-promtool-'));
    try {
      const broken = join(dir, 'broken.rules.yml');
      writeFileSync(
        broken,
        readFileSync(RULES_FILE, 'utf8').replace(
          'max by (sale) (flash_sale_stock_drift)',
          'max by (sale) (flash_sale_stock_drift',
        ),
      );
      expect(promtool(['check', 'rules', broken]).status).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // And the binary is the real one.
    expect(execFileSync(requireBinary(PROMTOOL_PATH, 'PROMTOOL_PATH'), ['--version'], { encoding: 'utf8' })).toMatch(
      /promtool, version \d+\.\d+/,
    );
  });
});
