import type { Audit } from './audit';
import type { SaleStrategy } from './sale';

/**
 * The demonstration's bounds: a burst the API can fire at itself in a few seconds on a laptop, and
 * never a load test in disguise (k6 is for that).
 */
export const DEMO_LIMITS = { maxStock: 500, maxBuyers: 2_000 } as const;

/** naive-unsafe first: the oversell is what the audience waits for. */
export const DEMO_DEFAULT_STRATEGIES: readonly SaleStrategy[] = [
  'naive-unsafe',
  'db-optimistic',
  'db-pessimistic',
  'redis-lua',
];

/** `POST /api/admin/demo-runs` (answers `202 {id}`); `strategies` defaults to DEMO_DEFAULT_STRATEGIES. */
export interface CreateDemoRunRequest {
  stock: number;
  buyers: number;
  strategies?: SaleStrategy[];
}

export interface DemoRunStarted {
  id: string;
}

export type DemoPhase = 'waiting' | 'preparing' | 'buying' | 'settling' | 'done' | 'failed';

/** One strategy's row of the demonstration: the same burst, and what became of it. */
export interface DemoStrategyResult {
  strategy: SaleStrategy;
  phase: DemoPhase;
  saleId?: string;
  /** Purchases sent so far (one per buyer). */
  sent: number;
  /** 201/202: the buyer was promised a unit. */
  accepted: number;
  /** 409/410: sold out, limit reached… a correct "no". */
  refused: number;
  /** Anything else (503 when optimistic retries ran out, a timeout…). */
  errors: number;
  /** From the sale's audit: units promised beyond the stock. */
  oversold: number | null;
  requestsPerSecond: number | null;
  p50Ms: number | null;
  p95Ms: number | null;
  durationMs: number | null;
  audit: Pick<
    Audit,
    'ok' | 'stock' | 'held' | 'oversold' | 'duplicateOrders' | 'lostReservations' | 'ordersByStatus'
  > | null;
  error?: string;
}

/** `GET /api/admin/demo-runs/:id`: the run's progress, then its results. */
export interface DemoRunReport {
  id: string;
  status: 'running' | 'finished' | 'failed';
  stock: number;
  buyers: number;
  createdAt: string;
  finishedAt: string | null;
  results: DemoStrategyResult[];
  error?: string;
}
