// The waiting room's place in the k6 report: the gauges its thresholds judge (Correctness and the
// Fairness verdict, lib/verdict.ts), what a passing verdict adds, and its charts over time. Pure (no k6
// import), so the Node crowd judges Fairness with the same bounds and the specs render a recorded run.
import type { ReportOptions, SampledChart } from './report.ts';
import { gaveUpBound, type LatencyBound } from './verdict.ts';
import { roomCorrectnessNotes, roomOrderNote } from './room-words.ts';
import { roomFiguresFromSummary } from './waiting-room.ts';

/** The room's Correctness thresholds: always built, so a failure always makes k6 exit 99. */
export const ROOM_CORRECTNESS_THRESHOLDS: Record<string, string[]> = {
  room_judged: ['count>=1'],
  room_tokens_without_pass: ['value==0'],
  room_admitted_then_sold_out: ['value==0'],
  room_notices_failed: ['value==0'],
  room_sold_out: ['value==1'],
};

/** The room's Fairness bounds: join order, the ETA, the purchase p95 and no buyer giving up. */
export function roomFairnessBounds(bounds: { etaErrorP90Percent: number; purchaseP95Ms: number }): LatencyBound[] {
  const none = (label: string, metric: string): LatencyBound => ({
    label,
    metric,
    stat: 'value',
    below: 1,
    unit: 'count',
  });
  return [
    none('admission inversions', 'room_inversions'),
    none('admissions ahead of the opening crowd', 'room_ahead_of_crowd'),
    none('ETA not measured', 'room_eta_unmeasured'),
    {
      label: 'ETA error p90',
      metric: 'room_eta_error_p90',
      stat: 'value',
      below: bounds.etaErrorP90Percent,
      unit: 'percent',
    },
    { label: 'purchase p95', metric: 'purchase_duration', stat: 'p(95)', below: bounds.purchaseP95Ms },
    gaveUpBound(),
  ];
}

/** What the waiting room's report adds to any report: the second verdict's name, its notes, its charts. */
export function roomReport(
  startDelaySeconds: number,
): Pick<ReportOptions, 'latencyName' | 'passNotes' | 'sampledCharts'> {
  // The opening and the sell-out, on the charts' time axis (seconds since setup).
  const marks: SampledChart['marks'] = (data) => {
    const soldOutAfter = roomFiguresFromSummary(data).sellOutAfterOpeningMs;
    return [
      { at: startDelaySeconds, label: 'the opening' },
      ...(soldOutAfter === undefined ? [] : [{ at: startDelaySeconds + soldOutAfter / 1000, label: 'sold out' }]),
    ];
  };
  const chart = (title: string, unit: string, series: SampledChart['series']) => ({ title, unit, series, marks });
  return {
    latencyName: 'Fairness',
    passNotes: {
      correctness: (data) => roomCorrectnessNotes(roomFiguresFromSummary(data)),
      latency: (data) => roomOrderNote(roomFiguresFromSummary(data)),
    },
    sampledCharts: [
      chart('Waiting room', 'buyers, sampled once a second', [
        { name: 'waiting', label: 'waiting', color: '#2563eb' },
        { name: 'shopping', label: 'shopping (admitted, not done)', color: '#d97706' },
      ]),
      chart('Admissions', 'per second', [
        { name: 'admissions', label: "seen by the buyers (first 'admitted' ticket)", color: '#16a34a' },
        { name: 'measured_admissions', label: "the room's measured rate", color: '#7c3aed' },
      ]),
    ],
  };
}
