// Setup and teardown as every scenario runs them: setup signs the admin in, gives the run an id, creates
// the scenario's sales and stamps the instant the load starts; teardown waits for each sale's queue to
// drain and audits it (lib/audit.ts).
import type { CreateSaleRequest, Sale, SaleStrategy } from '../../libs/contract/src/sale.ts';
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

/** A scenario's one sale: its fields but the name, description and window, which oneSaleRun gives it. */
export type OneSale = Omit<CreateSaleRequest, 'name' | 'description' | 'startsAt' | 'endsAt'> & {
  strategy: SaleStrategy;
};

/**
 * setup() and teardown() of a scenario on one load-test sale, `k6 <scenario> <run id>`, opening
 * `opensInSeconds` from now: setup creates it and says what the run will do (`announce`); teardown
 * audits it under its strategy (`held`: the units it must hold at the end, when the scenario knows them).
 */
export function oneSaleRun(
  config: CommonConfig,
  run: {
    scenario: string;
    about: string;
    opensInSeconds: number;
    sale: OneSale;
    announce?: (sale: Sale) => string;
    held?: number;
  },
): { setup: () => OneSaleRun; teardown: (data: OneSaleRun) => void } {
  const { strategy } = run.sale;
  return {
    setup: () =>
      setupRun(config, (admin, runId) => {
        const fields = {
          ...run.sale,
          name: `k6 ${run.scenario} ${runId}`,
          description: `k6 ${run.scenario}: ${run.about}`,
        };
        const created = createSaleOpeningLater(admin, run.opensInSeconds, fields, `Creating the ${strategy} sale`);
        if (run.announce) console.log(run.announce(created));
        return { saleId: created.id, startsAtMs: Date.parse(created.startsAt) };
      }),
    teardown: (data) => auditSales(config, [[data.saleId, { label: strategy, tags: { strategy }, held: run.held }]]),
  };
}

/** A teardown(): the admin signs in again, then each sale is audited once its queue has drained. */
export function auditSales(config: CommonConfig, sales: Array<[saleId: string, expect: AuditExpectations]>): void {
  const admin = signInAdmin(config);
  for (const [saleId, expect] of sales) auditChecks(waitForQuiet(admin, saleId), expect);
}
