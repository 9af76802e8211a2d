// Setup and teardown as every scenario runs them: setup signs the admin in, gives the run an id, creates
// the scenario's sales and stamps the instant the load starts; teardown waits for each sale's queue to
// drain and audits it (lib/audit.ts).
import type { CreateSaleRequest, Sale } from '../../libs/contract/src/sale.ts';
import { type Admin, type AuditExpectations, auditChecks, signInAdmin, waitForQuiet } from './audit.ts';
import { type CommonConfig, runId as newRunId } from './config.ts';
import { completeSetup } from './metrics.ts';
import { createSaleOpeningLater } from './scenario.ts';

/** What every setup() hands the VUs besides its sales. */
export interface RunData {
  /** Keeps this run's guest and sale names apart from other runs'. */
  runId: string;
  /** The timeline's origin (lib/timeline.ts). */
  loadStartMs: number;
}

/** A setup(): `createSales` makes the run's sales as the admin; what it returns reaches every VU. */
export function setupRun<T extends object>(
  config: CommonConfig,
  createSales: (admin: Admin, runId: string) => T,
): T & RunData {
  const admin = signInAdmin(config);
  const runId = newRunId();
  const sales = createSales(admin, runId);
  return completeSetup({ ...sales, runId, loadStartMs: Date.now() });
}

/** The setup data of a scenario on one sale. */
export interface OneSaleRun extends RunData {
  saleId: string;
  /** The sale's opening instant (epoch ms), for buyers who wait for it. */
  startsAtMs: number;
}

/**
 * The setup() of a scenario on one load-test sale opening `startDelaySeconds` from now (`sale` makes its
 * fields from the run id); `describe` says what the run is about to do.
 */
export function setupOneSale(
  config: CommonConfig,
  startDelaySeconds: number,
  sale: (runId: string) => Omit<CreateSaleRequest, 'startsAt' | 'endsAt'>,
  what: string,
  describe?: (sale: Sale) => string,
): OneSaleRun {
  return setupRun(config, (admin, runId) => {
    const created = createSaleOpeningLater(admin, startDelaySeconds, sale(runId), what);
    if (describe) console.log(describe(created));
    return { saleId: created.id, startsAtMs: Date.parse(created.startsAt) };
  });
}

/** A teardown(): the admin signs in again, then each sale is audited once its queue has drained. */
export function auditSales(config: CommonConfig, sales: Array<[saleId: string, expect: AuditExpectations]>): void {
  const admin = signInAdmin(config);
  for (const [saleId, expect] of sales) auditChecks(waitForQuiet(admin, saleId), expect);
}
