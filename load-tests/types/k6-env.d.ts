// What the k6 runtime provides that neither lib ES2020 nor @types/k6 declares.

/** k6's console: the output goes to k6's logger (stderr), one line per call. */
interface K6Console {
  log(...data: unknown[]): void;
  info(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
  debug(...data: unknown[]): void;
}

declare const console: K6Console;

/**
 * The object k6 passes to `handleSummary(data)` (the same JSON `--summary-export` writes):
 * https://grafana.com/docs/k6/latest/results-output/end-of-test/custom-summary/
 * Only what these scripts read is typed strictly; the rest is passed on untouched.
 */
interface K6SummaryMetric {
  type: 'counter' | 'gauge' | 'rate' | 'trend';
  contains: 'default' | 'time' | 'data';
  /** counter: count, rate · gauge: value, min, max · rate: rate, passes, fails · trend: avg, min, med, max, p(90), p(95)… */
  values: Record<string, number>;
  /** Threshold source → whether it held. Only on metrics (and sub-metrics) that have thresholds. */
  thresholds?: Record<string, { ok: boolean }>;
}

interface K6SummaryCheck {
  name: string;
  path: string;
  id: string;
  passes: number;
  fails: number;
}

interface K6SummaryGroup {
  name: string;
  path: string;
  id: string;
  groups: K6SummaryGroup[];
  checks: K6SummaryCheck[];
}

interface K6SummaryData {
  /** Metric name, or `name{tag:value}` for a sub-metric that a threshold asked for. */
  metrics: Record<string, K6SummaryMetric>;
  root_group: K6SummaryGroup;
  options: { summaryTrendStats: string[]; summaryTimeUnit: string; noColor: boolean };
  state: { isStdOutTTY: boolean; isStdErrTTY: boolean; testRunDurationMs: number };
}
