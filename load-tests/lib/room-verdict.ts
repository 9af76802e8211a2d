// The Node crowd's verdicts (bench/room-crowd.mjs): the same facts, and the same words, as the k6
// scenario's thresholds and report.
import {
  n,
  roomCorrectnessFailures,
  roomCorrectnessNotes,
  roomFairnessFailures,
  roomFairnessNotes,
} from './room-words.ts';
import { ETA_ERROR_P90_PERCENT, type RoomFigures } from './waiting-room.ts';

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

/**
 * Both verdicts of a run judged outside k6 (the Node crowd), with the audit and the purchase p95 bound:
 * the same facts, and the same words, as the k6 scenario's thresholds and report.
 */
export function judgeRoom(
  f: RoomFigures,
  audit: RoomAudit | null,
  bounds: { purchaseP95Ms: number; etaP90Below?: number },
): { correctness: RoomVerdict; fairness: RoomVerdict; pass: boolean } {
  const etaBound = bounds.etaP90Below ?? ETA_ERROR_P90_PERCENT;
  const wrong: string[] = [];
  if (!audit) wrong.push('no audit could be read');
  else {
    if (audit.oversoldPeak > 0) wrong.push(`OVERSOLD ${audit.oversoldPeak} unit(s)`);
    if (!audit.ok || !audit.drained || audit.duplicateOrders > 0 || audit.lostReservations > 0) {
      wrong.push(
        `audit not clean: ok ${audit.ok}, queue ${audit.drained ? 'drained' : 'NOT drained'}, duplicate orders ` +
          `${audit.duplicateOrders}, lost reservations ${audit.lostReservations}`,
      );
    }
  }
  if (f.broken > 0) wrong.push(`${f.broken} buyer(s) stopped by an answer outside the contract`);
  wrong.push(...roomCorrectnessFailures(f));
  const correctness: RoomVerdict =
    wrong.length > 0
      ? { pass: false, reason: wrong.join('; ') }
      : { pass: true, reason: `0 oversold, audit clean (held ${audit?.held}); ${roomCorrectnessNotes(f)}` };

  const slow = roomFairnessFailures(f, etaBound);
  const p95 = f.purchaseP95Ms;
  if (p95 === undefined) slow.push('purchase p95 not measured (no purchase)');
  else if (p95 >= bounds.purchaseP95Ms) slow.push(`purchase p95 ${n(p95, 1)} ms ≥ ${bounds.purchaseP95Ms} ms`);
  if (f.gaveUp > 0) slow.push(`${f.gaveUp} buyer(s) gave up on 429/503`);
  const fairness: RoomVerdict =
    slow.length > 0
      ? { pass: false, reason: slow.join('; ') }
      : {
          pass: true,
          reason: `${roomFairnessNotes(f, etaBound)}, purchase p95 ${n(p95, 1)} ms < ${bounds.purchaseP95Ms} ms`,
        };
  return { correctness, fairness, pass: correctness.pass && fairness.pass };
}
