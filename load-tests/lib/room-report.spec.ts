// The k6 report of a recorded waiting-room run (fixtures/waiting-room-pass.json, k6 1.3 against the real
// stack), and copies of it whose room thresholds failed: the verdicts name the room's facts.
import recordedRun from './fixtures/waiting-room-pass.json';
import { buildHtmlReport } from './report-html.ts';
import { buildReport, type ReportOptions } from './report.ts';
import { ROOM_CORRECTNESS_THRESHOLDS, roomFairnessBounds, roomReport } from './room-report.ts';
import { roomLines } from './room-words.ts';
import { verdicts } from './verdict.ts';
import { roomFiguresFromSummary } from './waiting-room.ts';

describe('the k6 report of a recorded run (k6 1.3, 600 buyers, the real stack)', () => {
  const options: ReportOptions = {
    name: 'waiting-room',
    config: { baseUrl: 'http://localhost:3710', latencyGates: true, resultsDir: 'load-tests/results' },
    latencyBounds: [
      ...roomFairnessBounds({ etaErrorP90Percent: 25, purchaseP95Ms: 500 }),
      { label: 'every room request p95', metric: 'http_req_duration{phase:room}', stat: 'p(95)', below: 500 },
    ],
    load: '300 buyers before the opening, 300 after',
    timelineBucketSeconds: 2,
    ...roomReport(15),
    details: (data) => roomLines(roomFiguresFromSummary(data)),
  };
  const recorded = () => JSON.parse(JSON.stringify(recordedRun)) as K6SummaryData;
  const judge = (data: K6SummaryData) =>
    verdicts(data, { latencyBounds: options.latencyBounds, latencyGates: true, passNotes: options.passNotes });
  /** The run had gauge `metric` been `value`, and its threshold judged it as k6 would. */
  const withGauge = (metric: string, value: number, ok: boolean): K6SummaryData => {
    const data = recorded();
    const gauge = data.metrics[metric];
    if (!gauge?.thresholds) throw new Error(`${metric} has no threshold in the fixture`);
    gauge.values['value'] = value;
    for (const source of Object.keys(gauge.thresholds)) gauge.thresholds[source] = { ok };
    return data;
  };

  it('carries every room threshold, and both verdicts pass with the room in their reasons', () => {
    for (const metric of Object.keys(ROOM_CORRECTNESS_THRESHOLDS))
      expect(recorded().metrics[metric]?.thresholds).toBeDefined();
    expect(roomFiguresFromSummary(recorded())).toMatchObject({
      buyers: 600,
      bought: 400,
      inversionsJudged: 100,
      noticesOwed: 200,
    });
    const v = judge(recorded());
    expect(v.correctness.reason).toBe(
      '0 oversold, audit clean (held 400), every answer in the contract (400 purchase answers); no token without a ' +
        'pass (128 probe(s) refused 403 ADMISSION_REQUIRED); every waiting buyer told sold out within 2 poll ' +
        'intervals (200 buyers, max 1)',
    );
    expect(v.latency.reason).toBe(
      '0 admission inversions (100 admissions after the opening judged), ETA error p90 0 % < 25 %, purchase p95 ' +
        '25 ms < 500 ms, every room request p95 20 ms < 500 ms',
    );
    expect(v.pass).toBe(true);
  });

  it('a token issued without a pass fails Correctness, naming it', () => {
    const v = judge(withGauge('room_tokens_without_pass', 2, false));
    expect(v.correctness).toMatchObject({
      pass: false,
      reason: "2 submit token(s) issued without the buyer's own valid pass",
    });
    expect(v.pass).toBe(false);
  });

  it('buyers told sold out late fail Correctness; a crowd that never finished too', () => {
    const late = withGauge('room_notices_failed', 3, false);
    late.metrics['room_notices_late']!.values['value'] = 3;
    late.metrics['room_notice_max_intervals']!.values['value'] = 4.2;
    expect(judge(late).correctness.reason).toBe(
      'waiting buyers not told in time: 3 told sold out after more than 2 poll intervals (max 4.2)',
    );
    const unfinished = recorded();
    unfinished.metrics['room_judged'] = {
      type: 'counter',
      contains: 'default',
      values: { count: 0, rate: 0 },
      thresholds: { 'count>=1': { ok: false } },
    };
    expect(judge(unfinished).correctness.reason).toMatch(/^the waiting-room crowd did not finish/);
  });

  it('an inversion fails Fairness, which the headline names and the exit code follows', () => {
    const data = withGauge('room_inversions', 3, false);
    const v = judge(data);
    expect(v.correctness.pass).toBe(true);
    expect(v.latency).toMatchObject({ pass: false, reason: 'admission inversions 3' });
    const report = buildReport(data, options, new Date('2026-11-27T19:24:37Z'));
    expect(report).toContain('Fairness:    FAIL — admission inversions 3');
    expect(report).toContain('Result:      FAIL (k6 exits 99: fairness failed and gates)');
  });

  it('an ETA error p90 over its bound fails Fairness', () => {
    expect(judge(withGauge('room_eta_error_p90', 41, false)).latency.reason).toBe('ETA error p90 41 % ≥ 25 %');
  });

  it('the HTML page charts the room and the admissions, the opening and the sell-out marked', () => {
    const html = buildHtmlReport(recorded(), options, new Date('2026-11-27T19:24:37Z'));
    expect(html).toContain('<td>Fairness</td><td><b class="pass">PASS</b></td>');
    expect(html).toContain('<figcaption>Waiting room <small>(buyers, sampled once a second)</small>');
    expect(html).toContain('<figcaption>Admissions <small>(per second)</small>');
    expect(html).toContain('<span class="mark">1 the opening</span> · <span class="mark">2 sold out</span>');
    expect(html.match(/<svg /g)).toHaveLength(8); // four charts, each drawn for a wide and a narrow page
  });
});
