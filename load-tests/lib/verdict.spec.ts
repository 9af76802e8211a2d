// The verdicts and reports, judged on end-of-test summaries (fixtures/*.json): k6's handleSummary data —
// every metric with its type, values and threshold results, the checks, options and state — for a
// healthy burst, a naive-unsafe sale that oversold and a run against the standard rate-limit profile.
// No k6 binary needed, so `npm test` runs them.
import naiveUnsafe from './fixtures/burst-naive-unsafe-oversold.json';
import healthy from './fixtures/burst-redis-lua-pass.json';
import rateLimited from './fixtures/burst-sign-ins-rate-limited.json';
import { buildHtmlReport } from './report-html.ts';
import { buildReport, type ReportOptions } from './report.ts';
import { fileStamp } from './summary.ts';
import { answersByStatus, endpointLatencies, timeline } from './summary-data.ts';
import { type LatencyBound, verdicts } from './verdict.ts';

const bounds: LatencyBound[] = [
  { label: 'purchase p95', metric: 'purchase_duration', stat: 'p(95)', below: 500 },
  { label: 'every request p95', metric: 'http_req_duration{scenario:burst}', stat: 'p(95)', below: 500 },
];

function options(latencyGates = true): ReportOptions {
  return {
    name: 'flash-sale-burst',
    config: { baseUrl: 'http://localhost:3000', latencyGates, resultsDir: 'load-tests/results' },
    latencyBounds: bounds,
    load: 'spike of 80 buyers/s',
    timelineBucketSeconds: 2,
  };
}

/** A deep copy, so a test can change a recorded summary without touching the others' copy. */
function copy(data: unknown): K6SummaryData {
  return JSON.parse(JSON.stringify(data)) as K6SummaryData;
}

/** The summary of the same run had purchase p95 been `p95` ms (and the threshold judged it as k6 would). */
function withPurchaseP95(data: unknown, p95: number, gates: boolean): K6SummaryData {
  const changed = copy(data);
  const metric = changed.metrics['purchase_duration']!;
  metric.values['p(95)'] = p95;
  metric.thresholds = gates ? { 'p(95)<500': { ok: p95 < 500 } } : { 'p(95)>=0': { ok: true } };
  return changed;
}

const startedAt = new Date('2026-11-25T10:40:29.000Z');
const firstLines = (report: string, n: number) => report.split('\n').slice(1, 1 + n);

describe('verdicts from recorded k6 summaries', () => {
  it('a healthy redis-lua burst: Correctness PASS and Latency PASS, exit 0', () => {
    const v = verdicts(copy(healthy), { latencyBounds: bounds, latencyGates: true });
    expect(v.correctness).toEqual({
      pass: true,
      gates: true,
      reason: '0 oversold, audit clean (held 500), every answer in the contract (2200 purchase answers)',
    });
    expect(v.latency.pass).toBe(true);
    expect(v.latency.reason).toBe('purchase p95 88 ms < 500 ms, every request p95 79 ms < 500 ms');
    expect(v.pass).toBe(true);
  });

  it('a naive-unsafe sale that oversold: Correctness FAIL naming the oversold units, whatever the latency', () => {
    const v = verdicts(copy(naiveUnsafe), { latencyBounds: bounds, latencyGates: true });
    expect(v.correctness.pass).toBe(false);
    expect(v.correctness.reason).toContain('OVERSOLD 450 unit(s): held 500 of a stock of 50');
    expect(v.correctness.reason).toContain('accepted 500 purchase(s), expected <=50');
    expect(v.latency.pass).toBe(true);
    expect(v.pass).toBe(false);

    const report = buildReport(copy(naiveUnsafe), options(false), startedAt);
    expect(firstLines(report, 3)).toEqual([
      expect.stringMatching(/^flash-sale-burst against http:\/\/localhost:3000 — 2026-11-25 10:40:29 UTC/),
      expect.stringMatching(/^Correctness: FAIL — OVERSOLD 450 unit\(s\): held 500 of a stock of 50;/),
      expect.stringMatching(/^Latency: {5}PASS — .* — not gating \(LATENCY_GATE=off\)$/),
    ]);
    // LATENCY_GATE=off never turns a correctness failure into a pass.
    expect(report).toContain('Result:      FAIL (k6 exits 99: correctness failed)');
  });

  it('sign-ins refused 429: the first lines say so and what to start the API with', () => {
    const report = buildReport(copy(rateLimited), options(), startedAt);
    const [, warning, remedy, correctness] = report.split('\n').slice(1);
    expect(warning).toBe(
      '!! SIGN-INS RATE-LIMITED: 80 of 100 guest sign-ins answered 429 — the API runs with the standard per-IP ' +
        'sign-in limit, and k6 signs every buyer in from one address.',
    );
    expect(remedy).toContain('RATE_LIMIT_PROFILE=load-test');
    expect(remedy).toContain('npm run start:load');
    expect(correctness).toBe(
      'Correctness: FAIL — 80 other call(s) broke the contract (80 of them sign-ins refused 429)',
    );
    expect(buildHtmlReport(copy(rateLimited), options(), startedAt)).toContain(
      '<div class="warn">SIGN-INS RATE-LIMITED: 80 of 100 guest sign-ins answered 429',
    );
  });

  it('p95 over the bound: Latency FAIL; it fails the run by default, and only reports with LATENCY_GATE=off', () => {
    const gated = verdicts(withPurchaseP95(healthy, 572, true), { latencyBounds: bounds, latencyGates: true });
    expect(gated.correctness.pass).toBe(true);
    expect(gated.latency).toEqual({ pass: false, gates: true, reason: 'purchase p95 572 ms ≥ 500 ms' });
    expect(gated.pass).toBe(false);

    const demo = verdicts(withPurchaseP95(healthy, 572, false), { latencyBounds: bounds, latencyGates: false });
    expect(demo.correctness.pass).toBe(true); // the latency threshold is not a correctness one
    expect(demo.latency).toEqual({
      pass: false,
      gates: false,
      reason: 'purchase p95 572 ms ≥ 500 ms — not gating (LATENCY_GATE=off)',
    });
    expect(demo.pass).toBe(true);
  });

  it('a run whose setup failed is a failure of both, not a vacuous pass', () => {
    const data = copy(healthy);
    delete data.metrics['setup_completed'];
    const v = verdicts(data, { latencyBounds: bounds, latencyGates: true });
    expect(v.correctness.reason).toMatch(/^setup did not complete/);
    expect(v.latency.pass).toBe(false);
    expect(v.pass).toBe(false);
  });
});

describe('report contents', () => {
  it('latency per endpoint (busiest first, unused endpoints left out) and answers by status', () => {
    const data = copy(healthy);
    expect(endpointLatencies(data).map((row) => [row.endpoint, row.requests])).toEqual([
      ['auth_guest', 2200],
      ['purchase', 2200],
      ['token', 2200],
      ['audit', 3],
      ['auth_admin', 2],
      ['create_sale', 1],
    ]);
    expect(answersByStatus(data)).toEqual([
      { status: '200', count: 3 },
      { status: '201', count: 4403 },
      { status: '202', count: 500 },
      { status: '410', count: 1700 },
    ]);
  });

  it('a timeline of req/s and percentiles per bucket, empty buckets at 0 req/s', () => {
    const points = timeline(copy(healthy), 2);
    expect(points[0]).toEqual({ at: 0, requestsPerSecond: 0, p50: undefined, p95: undefined, p99: undefined });
    expect(points[5]?.at).toBe(10);
    expect(points[5]?.requestsPerSecond).toBeGreaterThan(80);
    expect(points[5]?.p95).toBeGreaterThan(points[5]?.p50 ?? Infinity);
  });

  it('the HTML page is self-contained: both verdicts, two charts, the tables, nothing fetched', () => {
    const html = buildHtmlReport(copy(naiveUnsafe), options(), startedAt);
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('<td>Correctness</td><td><b class="fail">FAIL</b></td>');
    expect(html).toContain('<td>Latency</td><td><b class="pass">PASS</b></td>');
    expect(html.match(/<svg /g)).toHaveLength(4); // two charts, each drawn for a wide and a narrow page
    expect(html).toContain('<th class="text">endpoint</th><th>requests</th><th>p50</th><th>p95</th>');
    expect(html).toContain('OVERSOLD 450 unit(s)');
    expect(html).not.toMatch(/(src|href)="https?:/);
    expect(html).not.toContain('<script');
  });

  it('names the files of a run by its start time', () => {
    expect(fileStamp(startedAt)).toBe('2026-11-25T10-40-29');
  });
});
