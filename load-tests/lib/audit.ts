// The end-of-run proof: after the load, wait until the sale's order queue has drained, then turn its
// audit (`GET /api/admin/sales/:id/audit`, recomputed by the API from MySQL and Redis) into k6 checks
// and metrics that thresholds can fail the run on.
import { check, sleep } from 'k6';
import type { Audit } from '../../libs/contract/src/audit.ts';
import { Api, must } from './api.ts';
import type { CommonConfig } from './config.ts';
import { auditOk, auditViolations, duplicateOrders, heldUnits, lostReservations, oversoldUnits } from './metrics.ts';

/** What teardown needs to audit: an admin session on the API. */
export interface Admin {
  api: Api;
  token: string;
  quietTimeoutSeconds: number;
}

export function signInAdmin(config: CommonConfig): Admin {
  const api = new Api(config.baseUrl, config.httpTimeout);
  const token = must(
    api.admin(config.adminPassword),
    `Admin sign-in at ${config.baseUrl} (check BASE_URL and ADMIN_PASSWORD)`,
  );
  return { api, token, quietTimeoutSeconds: config.quietTimeoutSeconds };
}

export interface QuietAudit {
  /** The last audit read, or null if none could be read. */
  audit: Audit | null;
  /** True when `ordersByStatus.QUEUED` reached 0 within the time allowed. */
  quiet: boolean;
  waitedSeconds: number;
  /** Why no audit could be read, if so. */
  error?: string;
}

/**
 * Polls the sale's audit until no order is QUEUED any more (every reservation has its row, or is
 * known lost), at most `admin.quietTimeoutSeconds`. The audit is meant for such a quiet moment:
 * mid-drain it can see a reservation an instant before its row.
 */
export function waitForQuiet(admin: Admin, saleId: string, pollSeconds = 0.5): QuietAudit {
  const started = Date.now();
  const deadline = started + admin.quietTimeoutSeconds * 1000;
  let last: Audit | null = null;
  let error: string | undefined;
  for (;;) {
    const result = admin.api.audit(admin.token, saleId);
    if (result.ok) {
      last = result.value;
      error = undefined;
      if (last.ordersByStatus.QUEUED === 0) break;
    } else {
      error = `HTTP ${result.status} ${result.code}: ${result.message}`;
    }
    if (Date.now() + pollSeconds * 1000 > deadline) break;
    sleep(pollSeconds);
  }
  const quiet = last !== null && last.ordersByStatus.QUEUED === 0;
  return { audit: last, quiet, waitedSeconds: (Date.now() - started) / 1000, error };
}

export interface AuditExpectations {
  /** A name for the check labels, e.g. the strategy. */
  label: string;
  /** Tags on every check and metric sample; `strategy` at least, so thresholds can select them. */
  tags: Record<string, string>;
  /**
   * True (the default) for a strategy that must never oversell: the invariants become checks. False
   * for the naive-unsafe strategy, whose violations are the finding: only recorded, never checked.
   */
  enforce?: boolean;
  /** Units that must be held at the end (PENDING_PAYMENT + PAID), when the scenario knows it. */
  held?: number;
}

/**
 * Records one sale's audit: gauges `oversold_units`, `duplicate_orders`, `lost_reservations`,
 * `held_units`, `audit_ok`, counter `audit_violations`, and (when enforced) one check per invariant.
 * Returns whether the sale is clean.
 */
export function auditChecks(result: QuietAudit, expect: AuditExpectations): boolean {
  const { audit, quiet } = result;
  const tags = { ...expect.tags, sale: audit?.saleId ?? 'unknown' };
  const enforce = expect.enforce ?? true;
  const label = `[${expect.label}]`;

  if (!audit) {
    auditViolations.add(1, tags);
    auditOk.add(0, tags);
    check(null, { [`${label} audit answered`]: () => false }, tags);
    console.error(`${label} no audit could be read: ${result.error ?? 'unknown error'}`);
    return false;
  }

  // The peak, not the oversell now: orders that expired or were cancelled before the audit gave their
  // units back, and an oversell is no less one for that.
  oversoldUnits.add(audit.oversoldPeak, tags);
  duplicateOrders.add(audit.duplicateOrders, tags);
  lostReservations.add(audit.lostReservations, tags);
  heldUnits.add(audit.held, tags);
  const clean = audit.ok && quiet;
  auditOk.add(clean ? 1 : 0, tags);
  auditViolations.add(audit.oversoldPeak + audit.duplicateOrders + audit.lostReservations + (clean ? 0 : 1), tags);

  const summary =
    `${label} sale ${audit.saleId}: stock ${audit.stock}, held ${audit.held}, remaining ${audit.remaining}, ` +
    `oversold ${audit.oversold} (peak ${audit.oversoldPeak}), duplicateOrders ${audit.duplicateOrders}, lostReservations ${audit.lostReservations}, ` +
    `ok ${audit.ok}, orders ${JSON.stringify(audit.ordersByStatus)} (queue ${quiet ? 'drained' : 'NOT drained'} ` +
    `after ${result.waitedSeconds.toFixed(1)} s)`;
  if (clean) console.log(summary);
  else console.warn(summary);

  if (!enforce) {
    check(audit, { [`${label} audit answered`]: () => true }, tags);
    return clean;
  }
  const checks: Record<string, (a: Audit) => boolean> = {
    [`${label} queue drained (no QUEUED orders)`]: () => quiet,
    [`${label} no oversell (oversoldPeak = 0)`]: (a) => a.oversoldPeak === 0,
    [`${label} no duplicate orders`]: (a) => a.duplicateOrders === 0,
    [`${label} no lost reservations`]: (a) => a.lostReservations === 0,
    [`${label} audit ok (books balance)`]: (a) => a.ok,
  };
  const held = expect.held;
  if (held !== undefined) checks[`${label} held units = ${held}`] = (a) => a.held === held;
  return check(audit, checks, tags) && clean;
}
