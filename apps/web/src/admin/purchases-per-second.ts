import type { SaleDashboard } from '@flash-sale/contract';

/** One bar of the dashboard's chart: how many purchases were made in one second of the server's clock. */
export interface SecondCount {
  /** Epoch ms where the second begins. */
  at: number;
  /** A whole number: orders counted, never a rate derived from them. */
  purchases: number;
}

/** The chart's window: the last minute, well inside the two minutes a sample's `history` covers (docs/api.md). */
export const CHART_SECONDS = 60;

/**
 * The purchases of each whole second of the last minute, from the sample's `history` (orders counted by
 * the second their unit was reserved). The second still running when the sample was taken is left out:
 * a part of a second would read as a drop. Seconds without an order are there with 0, so the time axis
 * has no gaps.
 */
export function purchasesPerSecond(sample: SaleDashboard): SecondCount[] {
  const lastSecond = Math.floor(Date.parse(sample.sampledAt) / 1_000) - 1;
  const firstSecond = lastSecond - CHART_SECONDS + 1;
  const bySecond = new Map<number, number>();
  for (const entry of sample.history ?? []) {
    const second = Math.floor(Date.parse(entry.at) / 1_000);
    bySecond.set(second, (bySecond.get(second) ?? 0) + entry.purchases);
  }
  const seconds: SecondCount[] = [];
  for (let second = firstSecond; second <= lastSecond; second++) {
    seconds.push({ at: second * 1_000, purchases: bySecond.get(second) ?? 0 });
  }
  return seconds;
}

/** The busiest second's purchases. */
export function peakSecond(seconds: readonly SecondCount[]): number {
  return seconds.reduce((peak, second) => Math.max(peak, second.purchases), 0);
}

export function totalPurchases(seconds: readonly SecondCount[]): number {
  return seconds.reduce((total, second) => total + second.purchases, 0);
}

/** 1 → "1 purchase", 1200 → "1,200 purchases". */
export function purchasesText(count: number): string {
  return `${count.toLocaleString('en-US')} purchase${count === 1 ? '' : 's'}`;
}
