import type { SaleDashboard } from '@flash-sale/contract';
import { useState } from 'react';

/** One sample's readings that the live charts draw over time. */
export interface LivePoint {
  /** Epoch ms when the API took the sample. */
  at: number;
  /** Reservations in the hand-off, not written to MySQL yet. */
  backlog: number;
  /** Units by which Redis and MySQL disagree; null when the sample has no audit drift. */
  drift: number | null;
  /** Null while the API process has no window of calls to measure. */
  p50Ms: number | null;
  p95Ms: number | null;
}

/** Two minutes at one sample a second, as long as the purchases chart's history. */
export const LIVE_SERIES_POINTS = 120;

function livePoint(sample: SaleDashboard): LivePoint {
  return {
    at: Date.parse(sample.sampledAt),
    backlog: sample.handoff.unwritten,
    drift: sample.audit.drift ?? null,
    p50Ms: sample.reservationLatency?.p50Ms ?? null,
    p95Ms: sample.reservationLatency?.p95Ms ?? null,
  };
}

/**
 * The series with the sample's point added last, the oldest dropped beyond LIVE_SERIES_POINTS; the very
 * same series for a sample it already has, or an older one (a poll answered late).
 */
export function withSample(series: readonly LivePoint[], sample: SaleDashboard): readonly LivePoint[] {
  const point = livePoint(sample);
  const last = series.at(-1);
  if (last && point.at <= last.at) return series;
  return [...series.slice(-(LIVE_SERIES_POINTS - 1)), point];
}

/**
 * Every sample this page has seen, as a series. Kept here rather than by the API: backlog, drift and
 * latency are readings of the moment (unlike the orders behind the purchases chart, which carry their
 * time and are counted again from MySQL), and an API process keeping their past would keep its own, one
 * of several behind the load balancer. A reload starts afresh; render it keyed by sale.
 */
export function useLiveSeries(sample: SaleDashboard): readonly LivePoint[] {
  const [series, setSeries] = useState<readonly LivePoint[]>([]);
  const next = withSample(series, sample);
  // Adjusting state while rendering (React's pattern for state derived from changing props): the
  // charts draw the new sample in this render, not one poll late.
  if (next !== series) setSeries(next);
  return next;
}
