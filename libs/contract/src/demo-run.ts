import type { Audit } from './audit';
import type { SaleStrategy } from './sale';

/**
 * The demonstration's bounds: a burst the API can fire at itself in a few seconds on a laptop, and
 * never a load test in disguise (k6 is for that).
 */
export const DEMO_LIMITS = { maxStock: 500, maxBuyers: 2_000 } as const;

/** How long `POST /api/admin/sales/:id/pause-lock-holder` keeps its pause armed when no buyer takes it. */
export const LOCK_HOLDER_PAUSE_ARMED_SECONDS = 600;

/**
 * `POST /api/admin/sales/:id/pause-lock-holder` (answers `200`): the demonstration's paused lock holder,
 * for a test sale of a lock strategy, so a load test (k6) can show what `pauseLockHolder` shows.
 */
export interface LockHolderPauseArmed {
  saleId: string;
  /** Past this instant an unused pause is dropped. */
  armedUntil: string;
}

/** `POST /api/admin/demo-runs` (answers `202 {id}`); `strategies` defaults to DEMO_DEFAULT_STRATEGIES (sale.ts). */
export interface CreateDemoRunRequest {
  stock: number;
  buyers: number;
  strategies?: SaleStrategy[];
  /**
   * In the lock strategies' sales, the first buyer to get the lock stops between reading the stock and
   * writing it, for longer than the lock's TTL (its renewal stops too), as a GC pause would do it.
   * Default false.
   */
  pauseLockHolder?: boolean;
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
  /** Buyers whose purchase was sent so far (a buyer's retries are not counted again). */
  sent: number;
  /**
   * Buyers told to try again — `503` (optimistic retries ran out, the lock could not be had or was
   * lost) or `429`, with `retry-after`: nothing was done — who did, as the storefront does: with the
   * same submit token, after the wait asked, twice at most. Their final answer is counted below.
   */
  retried: number;
  /** 201/202: the buyer was promised a unit. */
  accepted: number;
  /** 409/410: sold out, limit reached… a correct "no". */
  refused: number;
  /**
   * Anything else, as the buyer's final answer: still `503` + `retry-after` after the retries (a
   * correct "try again with the same token", never an oversell), or a timeout.
   */
  errors: number;
  /** From the sale's audit: units promised beyond the stock (its `oversoldPeak`, kept after the orders expire). */
  oversold: number | null;
  requestsPerSecond: number | null;
  p50Ms: number | null;
  p95Ms: number | null;
  durationMs: number | null;
  audit: Pick<
    Audit,
    'ok' | 'stock' | 'held' | 'oversold' | 'oversoldPeak' | 'duplicateOrders' | 'lostReservations' | 'ordersByStatus'
  > | null;
  error?: string;
}

/** `GET /api/admin/demo-runs/:id`: the run's progress, then its results. */
export interface DemoRunReport {
  id: string;
  status: 'running' | 'finished' | 'failed';
  stock: number;
  buyers: number;
  /** Whether the lock strategies' first lock holder was paused past the lock's TTL. */
  pauseLockHolder: boolean;
  createdAt: string;
  finishedAt: string | null;
  results: DemoStrategyResult[];
  error?: string;
}
