import type { ReservationLatency } from '@flash-sale/contract';

/** One bucket of a cumulative histogram: the observations at or under `le` seconds (`Infinity` last). */
export interface HistogramBucket {
  le: number;
  count: number;
}

interface Reading {
  atMs: number;
  buckets: readonly HistogramBucket[];
}

/**
 * A reading closer than this to the last one kept is not kept, so pollers cannot grow the list; nor is a
 * window this short measured (it would say "0 s").
 */
const MIN_READING_SPACING_MS = 1_000;

/**
 * Latency percentiles over the last `windowMs`, from successive readings of a cumulative histogram: the
 * difference between the newest reading and the oldest one inside the window holds exactly the
 * observations made between them. Nothing is added to the timed path; a reading is taken when someone
 * asks (the dashboard's poll), so the first ask after a quiet spell has no baseline yet.
 */
export class RecentLatency {
  private readings: Reading[] = [];

  constructor(private readonly windowMs: number) {}

  /** Adds a reading; undefined while no reading a second or more older lies within the window. */
  read(atMs: number, buckets: readonly HistogramBucket[]): ReservationLatency | undefined {
    this.readings = this.readings.filter((reading) => reading.atMs >= atMs - this.windowMs);
    const baseline = this.readings[0];
    const last = this.readings.at(-1);
    if (!last || atMs - last.atMs >= MIN_READING_SPACING_MS) this.readings.push({ atMs, buckets });
    if (!baseline || atMs - baseline.atMs < MIN_READING_SPACING_MS) return undefined;
    const window = buckets.map((bucket, i) => ({
      le: bucket.le,
      count: bucket.count - (baseline.buckets[i]?.count ?? 0),
    }));
    const calls = window.at(-1)?.count ?? 0;
    return {
      p50Ms: toMs(histogramQuantile(0.5, window)),
      p95Ms: toMs(histogramQuantile(0.95, window)),
      p99Ms: toMs(histogramQuantile(0.99, window)),
      calls,
      windowSeconds: Math.round((atMs - baseline.atMs) / 1_000),
    };
  }
}

/**
 * The `q`-quantile of cumulative buckets, as Prometheus's `histogram_quantile` estimates it: linear within
 * the bucket the rank falls in (from 0 for the first), and the highest finite bound when it falls in the
 * `+Inf` bucket. Null without observations.
 */
export function histogramQuantile(q: number, buckets: readonly HistogramBucket[]): number | null {
  const total = buckets.at(-1)?.count ?? 0;
  if (total === 0) return null;
  const rank = q * total;
  const at = buckets.findIndex((bucket) => bucket.count >= rank);
  const bucket = buckets[at]!;
  const below = buckets[at - 1] ?? { le: 0, count: 0 };
  if (bucket.le === Infinity) return below.le;
  return below.le + ((bucket.le - below.le) * (rank - below.count)) / (bucket.count - below.count);
}

/** Seconds to milliseconds, to the hundredth: the buckets' resolution is far coarser. */
function toMs(seconds: number | null): number | null {
  return seconds === null ? null : Math.round(seconds * 100_000) / 100;
}
