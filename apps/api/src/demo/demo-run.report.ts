import type { OrdersByStatus, SaleStrategy } from '@flash-sale/domain';

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
  audit: {
    ok: boolean;
    stock: number;
    held: number;
    oversold: number;
    duplicateOrders: number;
    lostReservations: number;
    ordersByStatus: OrdersByStatus;
  } | null;
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

export function emptyResult(strategy: SaleStrategy): DemoStrategyResult {
  return {
    strategy,
    phase: 'waiting',
    sent: 0,
    accepted: 0,
    refused: 0,
    errors: 0,
    oversold: null,
    requestsPerSecond: null,
    p50Ms: null,
    p95Ms: null,
    durationMs: null,
    audit: null,
  };
}

/** The nearest-rank percentile of sorted values (ms). */
export function percentile(sorted: readonly number[], fraction: number): number | null {
  if (sorted.length === 0) return null;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return Math.round((sorted[index] ?? 0) * 10) / 10;
}
