import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LRParser } from '@lezer/lr';
import { load } from 'js-yaml';

// Prometheus's own PromQL grammar. The package ships CommonJS (dist/index.cjs) but declares its types for
// ESM importers only, which a CommonJS file may not import: loaded with require, typed by @lezer/lr.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parser } = require('@prometheus-io/lezer-promql') as { parser: LRParser };

/**
 * The observability files of deploy/ as the tests read them: Prometheus's configuration, its rules and
 * their unit tests, Grafana's provisioning and dashboard; the PromQL in them parsed with Prometheus's own
 * grammar (@prometheus-io/lezer-promql) to name the series they read.
 */
export const ROOT = join(__dirname, '..', '..');
export const PROMETHEUS_DIR = join(ROOT, 'deploy', 'prometheus');
export const PROMETHEUS_CONFIG = join(PROMETHEUS_DIR, 'prometheus.yml');
export const RULES_FILE = join(PROMETHEUS_DIR, 'flash-sale.rules.yml');
export const RULES_TEST_FILE = join(PROMETHEUS_DIR, 'flash-sale.rules.test.yml');
export const GRAFANA_DIR = join(ROOT, 'deploy', 'grafana');
export const DASHBOARD_FILE = join(GRAFANA_DIR, 'dashboards', 'flash-sale.json');

/** Debian's `prometheus` package (`.ci/run` installs it); PROMTOOL_PATH and PROMETHEUS_PATH point elsewhere. */
export const PROMTOOL_PATH = process.env['PROMTOOL_PATH'] ?? '/usr/bin/promtool';
export const PROMETHEUS_PATH = process.env['PROMETHEUS_PATH'] ?? '/usr/bin/prometheus';

/** The binary at `path`, or an error that says how to get it. */
export function requireBinary(path: string, variable: string): string {
  if (!existsSync(path)) {
    throw new Error(
      `No ${path}: install Debian's prometheus package (apt-get install -y --no-install-recommends prometheus, as .ci/run does) or set ${variable}`,
    );
  }
  return path;
}

export function readYaml<T>(file: string): T {
  return load(readFileSync(file, 'utf8')) as T;
}

export interface PrometheusConfig {
  global: { scrape_interval: string; evaluation_interval: string };
  rule_files: string[];
  scrape_configs: ScrapeConfig[];
}
export interface ScrapeConfig {
  job_name: string;
  authorization?: { credentials_file?: string; credentials?: string };
  dns_sd_configs?: { names: string[]; type: string; port: number }[];
  static_configs?: { targets: string[] }[];
}

export interface RecordingRule {
  record: string;
  expr: string;
}
export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The rule file's recording and alert rules, every group together. */
export function loadRules(): { recording: RecordingRule[]; alerts: AlertRule[] } {
  const { groups } = readYaml<{ groups: { name: string; rules: (RecordingRule | AlertRule)[] }[] }>(RULES_FILE);
  const rules = groups.flatMap((group) => group.rules);
  return {
    recording: rules.filter((rule): rule is RecordingRule => 'record' in rule),
    alerts: rules.filter((rule): rule is AlertRule => 'alert' in rule),
  };
}

export interface RuleUnitTests {
  rule_files: string[];
  tests: {
    name: string;
    input_series: { series: string; values: string }[];
    alert_rule_test?: { eval_time: string; alertname: string; exp_alerts: unknown[] }[];
    promql_expr_test?: { expr: string; eval_time: string; exp_samples: unknown[] }[];
  }[];
}

export interface DashboardQuery {
  panel: string;
  expr: string;
}
interface Panel {
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: { expr: string; datasource?: { uid: string } }[];
  panels?: Panel[];
  gridPos: { h: number; w: number; x: number; y: number };
}
export interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: string }[] };
}

export function loadDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
}

/** Every panel, those inside collapsed rows too. */
export function dashboardPanels(dashboard: Dashboard = loadDashboard()): Panel[] {
  return dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

/** Every query of the dashboard, with Grafana's interval variables replaced so that it is plain PromQL. */
export function dashboardQueries(dashboard: Dashboard = loadDashboard()): DashboardQuery[] {
  return dashboardPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: withGrafanaIntervals(target.expr) })),
  );
}

/** `$__rate_interval`, `$__interval`, `$__range` (and their `${…}` spellings) as one duration. */
export function withGrafanaIntervals(expr: string, duration = '1m'): string {
  return expr.replace(/\$\{?__(rate_interval|interval|range)\}?/g, duration);
}

/**
 * The names of the series a PromQL expression selects (`name{…}`, or `{__name__="name"}`), parsed with
 * Prometheus's grammar. Throws on a syntax error, and on a selector whose series it cannot name (a
 * regular expression on `__name__`): every series the files read must be checkable.
 */
export function selectedSeries(expr: string): Set<string> {
  const names = new Set<string>();
  const tree = parser.parse(expr);
  tree.iterate({
    enter: (ref) => {
      if (ref.type.isError) {
        throw new Error(`PromQL syntax error at ${ref.from} in: ${expr}`);
      }
      if (ref.name !== 'VectorSelector') return;
      const selector = ref.node;
      const identifier = selector.getChild('Identifier');
      if (identifier) {
        names.add(expr.slice(identifier.from, identifier.to));
        return;
      }
      const byName = selector
        .getChild('LabelMatchers')
        ?.getChildren('UnquotedLabelMatcher')
        .find((matcher) => {
          const label = matcher.getChild('LabelName');
          return (
            label &&
            expr.slice(label.from, label.to) === '__name__' &&
            matcher.getChild('MatchOp')?.getChild('EqlSingle')
          );
        });
      const literal = byName?.getChild('StringLiteral');
      if (!literal) throw new Error(`A selector without a metric name in: ${expr}`);
      names.add(JSON.parse(expr.slice(literal.from, literal.to)) as string);
    },
  });
  return names;
}

/** Series Prometheus makes itself: scrape health and alert state. */
export const PROMETHEUS_OWN_SERIES = new Set([
  'up',
  'scrape_duration_seconds',
  'scrape_samples_scraped',
  'scrape_samples_post_metric_relabeling',
  'scrape_series_added',
  'ALERTS',
  'ALERTS_FOR_STATE',
]);

/**
 * The series names a scrape in Prometheus's text format can yield, from its `# TYPE` lines (present
 * even while a labelled series has no child yet): each family, and a histogram's or summary's
 * `_bucket`, `_sum` and `_count`.
 */
export function exportedSeriesNames(scrape: string): Set<string> {
  const names = new Set<string>();
  for (const [, family, type] of scrape.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(family!);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${family}${suffix}`);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(`${family}${suffix}`);
  }
  return names;
}
