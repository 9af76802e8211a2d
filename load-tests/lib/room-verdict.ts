// The Node crowd's verdicts (bench/room-crowd.mjs): Correctness from its audit and the room's facts, in the
// k6 scenario's words; Fairness by k6's own latency verdict, over the end-of-test data k6 would have held.
import { roomFairnessBounds } from './room-report.ts';
import { roomCorrectnessFailures, roomCorrectnessNotes, roomOrderNote } from './room-words.ts';
import { latencyVerdict } from './verdict.ts';
import { ETA_ERROR_P90_PERCENT, ROOM_FIGURE_KEYS, type RoomFigures, roomMetric } from './waiting-room.ts';

/** A sale's audit as the Node crowd reads it (`GET /api/admin/sales/:id/audit`), and whether its queue had drained. */
export interface RoomAudit {
  ok: boolean;
  /** The most units the sale ever held beyond its stock (an oversell its orders gave back since is one). */
  oversoldPeak: number;
  duplicateOrders: number;
  lostReservations: number;
  held: number;
  drained: boolean;
}

export interface RoomVerdict {
  pass: boolean;
  reason: string;
}

/** What k6's end-of-test data would hold had k6 driven this crowd: its gauges, the purchase p95, the give-ups. */
export function roomSummary(f: RoomFigures): K6SummaryData {
  const metrics: Record<string, { values: Record<string, number> }> = {
    setup_completed: { values: { count: 1 } },
    purchase_gave_up: { values: { count: f.gaveUp } },
  };
  if (f.purchaseP95Ms !== undefined) metrics['purchase_duration'] = { values: { 'p(95)': f.purchaseP95Ms } };
  for (const key of ROOM_FIGURE_KEYS) {
    const value = f[key];
    if (value !== undefined) metrics[roomMetric(key)] = { values: { value } };
  }
  return { metrics } as unknown as K6SummaryData;
}

function auditFailures(audit: RoomAudit | null): string[] {
  if (!audit) return ['no audit could be read'];
  const wrong = audit.oversoldPeak > 0 ? [`OVERSOLD ${audit.oversoldPeak} unit(s)`] : [];
  if (!audit.ok || !audit.drained || audit.duplicateOrders > 0 || audit.lostReservations > 0) {
    wrong.push(
      `audit not clean: ok ${audit.ok}, queue ${audit.drained ? 'drained' : 'NOT drained'}, duplicate orders ` +
        `${audit.duplicateOrders}, lost reservations ${audit.lostReservations}`,
    );
  }
  return wrong;
}

/** Both verdicts of a run judged outside k6 (the Node crowd), with its audit and the purchase p95 bound. */
export function judgeRoom(
  f: RoomFigures,
  audit: RoomAudit | null,
  bounds: { purchaseP95Ms: number; etaP90Below?: number },
): { correctness: RoomVerdict; fairness: RoomVerdict; pass: boolean } {
  const wrong = [
    ...auditFailures(audit),
    ...(f.broken > 0 ? [`${f.broken} buyer(s) stopped by an answer outside the contract`] : []),
    ...roomCorrectnessFailures(f),
  ];
  const correctness: RoomVerdict =
    wrong.length > 0
      ? { pass: false, reason: wrong.join('; ') }
      : { pass: true, reason: `0 oversold, audit clean (held ${audit?.held}); ${roomCorrectnessNotes(f)}` };
  const latencyBounds = roomFairnessBounds({
    etaErrorP90Percent: bounds.etaP90Below ?? ETA_ERROR_P90_PERCENT,
    purchaseP95Ms: bounds.purchaseP95Ms,
  });
  const { pass, reason } = latencyVerdict(roomSummary(f), {
    latencyBounds,
    latencyGates: true,
    passNotes: { latency: () => roomOrderNote(f) },
  });
  return { correctness, fairness: { pass, reason }, pass: correctness.pass && pass };
}
