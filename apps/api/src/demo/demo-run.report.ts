import type { DemoStrategyResult, SaleStrategy } from '@flash-sale/contract';

export type { DemoPhase, DemoRunReport, DemoStrategyResult } from '@flash-sale/contract';

export function emptyResult(strategy: SaleStrategy): DemoStrategyResult {
  return {
    strategy,
    phase: 'waiting',
    sent: 0,
    retried: 0,
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
