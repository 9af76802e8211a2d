// The waiting room's place in the k6 report: the gauges its thresholds judge (Correctness and the
// Fairness verdict, lib/verdict.ts), what a passing verdict adds, and its charts over time. Pure (no k6
// import), so waiting-room.spec.ts renders a recorded run's report with it.
import type { ReportOptions, SampledChart } from './report.ts';
import type { LatencyBound } from './verdict.ts';
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

/** The room's Fairness bounds; the purchase's and the requests' p95 join them in the scenario. */
export function roomFairnessBounds(etaErrorP90Percent: number): LatencyBound[] {
  return [
    { label: 'admission inversions', metric: 'room_inversions', stat: 'value', below: 1, unit: 'count' },
    {
      label: 'admissions ahead of the opening crowd',
      metric: 'room_ahead_of_crowd',
      stat: 'value',
      below: 1,
      unit: 'count',
    },
    { label: 'ETA not measured', metric: 'room_eta_unmeasured', stat: 'value', below: 1, unit: 'count' },
    {
      label: 'ETA error p90',
      metric: 'room_eta_error_p90',
      stat: 'value',
      below: etaErrorP90Percent,
      unit: 'percent',
    },
  ];
}

/** The opening (`startDelaySeconds` after setup) and the sell-out, on the charts' time axis. */
function marks(startDelaySeconds: number): SampledChart['marks'] {
  return (data) => {
    const soldOutAfter = roomFiguresFromSummary(data).sellOutAfterOpeningMs;
    return [
      { at: startDelaySeconds, label: 'the opening' },
      ...(soldOutAfter === undefined ? [] : [{ at: startDelaySeconds + soldOutAfter / 1000, label: 'sold out' }]),
    ];
  };
}

/** What the waiting room's report adds to any report: the second verdict's name, its notes, its charts. */
export function roomReport(
  startDelaySeconds: number,
): Pick<ReportOptions, 'latencyName' | 'passNotes' | 'sampledCharts'> {
  return {
    latencyName: 'Fairness',
    passNotes: {
      correctness: (data) => roomCorrectnessNotes(roomFiguresFromSummary(data)),
      latency: (data) => roomOrderNote(roomFiguresFromSummary(data)),
    },
    sampledCharts: [
      {
        title: 'Waiting room',
        unit: 'buyers, sampled once a second',
        series: [
          { name: 'waiting', label: 'waiting', color: '#2563eb' },
          { name: 'shopping', label: 'shopping (admitted, not done)', color: '#d97706' },
        ],
        marks: marks(startDelaySeconds),
      },
      {
        title: 'Admissions',
        unit: 'per second',
        series: [
          { name: 'admissions', label: "seen by the buyers (first 'admitted' ticket)", color: '#16a34a' },
          { name: 'measured_admissions', label: "the room's measured rate", color: '#7c3aed' },
        ],
        marks: marks(startDelaySeconds),
      },
    ],
  };
}
