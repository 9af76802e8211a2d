import type { SaleDashboard } from '@flash-sale/contract';

/** One point of the purchases-per-second chart: the rate between the previous sample and this one. */
export interface RatePoint {
  /** Epoch ms of the sample (the server's clock). */
  at: number;
  perSecond: number;
}

/** The latest dashboard sample and the rates measured so far: the dashboard query's cached data. */
export interface DashboardHistory {
  latest: SaleDashboard;
  points: RatePoint[];
  /** Epoch ms where the first point's interval begins: the points cover windowStart…last point. */
  windowStart: number;
}

/** Two minutes at one sample a second. */
export const MAX_RATE_POINTS = 120;

/**
 * Adds a sample: the rate since the previous one is the growth of `purchases` divided by the seconds
 * between their `sampledAt` (the server's clock, so a slow or paused poll still gives the true average).
 * The first sample has nothing to compare with and gives no point.
 */
export function addSample(history: DashboardHistory | undefined, sample: SaleDashboard): DashboardHistory {
  const at = Date.parse(sample.sampledAt);
  if (!history || history.latest.sale.id !== sample.sale.id) return seeded(sample, at);
  const seconds = (at - Date.parse(history.latest.sampledAt)) / 1_000;
  // The same or an older sample (two fetches crossed): there is no interval to measure.
  if (!(seconds > 0)) return { ...history, latest: sample };
  // `purchases` counts every order ever made, so it never shrinks; clamp in case rows were deleted by hand.
  const perSecond = Math.max(0, sample.purchases - history.latest.purchases) / seconds;
  const all = [...history.points, { at, perSecond }];
  const dropped = all.length - MAX_RATE_POINTS;
  if (dropped <= 0) return { latest: sample, points: all, windowStart: history.windowStart };
  return { latest: sample, points: all.slice(dropped), windowStart: all[dropped - 1]?.at ?? history.windowStart };
}

/**
 * The first sample of a page load: the chart starts with the server's per-second history (orders by
 * the buyer's second, last two minutes), so a reload mid-sale does not wipe what was already drawn.
 */
function seeded(sample: SaleDashboard, at: number): DashboardHistory {
  const history = sample.history ?? [];
  if (history.length === 0) return { latest: sample, points: [], windowStart: at };
  const bySecond = new Map(history.map((entry) => [Math.floor(Date.parse(entry.at) / 1_000), entry.purchases]));
  const lastSecond = Math.floor(at / 1_000);
  const firstSecond = Math.max(Math.min(...bySecond.keys()), lastSecond - MAX_RATE_POINTS + 1);
  const points: RatePoint[] = [];
  for (let second = firstSecond; second <= lastSecond; second++) {
    points.push({ at: (second + 1) * 1_000, perSecond: bySecond.get(second) ?? 0 });
  }
  return { latest: sample, points, windowStart: firstSecond * 1_000 };
}

export function peakRate(points: readonly RatePoint[]): number {
  return points.reduce((peak, point) => Math.max(peak, point.perSecond), 0);
}

/** 12.345 → "12.3", 40 → "40": a rate to one decimal, without a trailing ".0". */
export function formatRate(perSecond: number): string {
  return perSecond.toLocaleString('en-US', { maximumFractionDigits: 1 });
}
