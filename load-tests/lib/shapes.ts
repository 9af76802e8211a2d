// The load shapes of the scenarios. A real flash sale is a spike: arrivals climb within seconds of the
// opening, hold at a peak, and fade as the stock runs out. Arrival-rate executors model it with *open*
// arrivals — a buyer arrives on schedule whether or not the API answered the one before — so a slow API
// shows up as latency and dropped arrivals, not as a quieter test.
//
// Pure data and builders (no k6 runtime import): the Node load generator (bench/k6-shapes.mjs) replays
// the same defaults, so what it measured is what k6 will ask for.
import type { RampingArrivalRateScenario } from 'k6/options';

/** Arrivals per second climb to `peakRate` over `rampUpS`, hold for `holdS`, fall to 0 over `rampDownS`. */
export interface SpikeShape {
  peakRate: number;
  rampUpS: number;
  holdS: number;
  rampDownS: number;
}

/**
 * Defaults of every scenario, sized so that one healthy stack (API, worker, Redis and MariaDB on the
 * same 2-core laptop) meets the p95 bound with margin: see load-tests/README.md "Sizing".
 */
export const DEFAULT_SHAPES = {
  /** flash-sale-burst: ~2,000 buyers in 35 s for 500 units. */
  burst: { peakRate: 80, rampUpS: 5, holdS: 20, rampDownS: 10 },
  /** duplicate-clicks: each buyer sends 7 purchases at once, so fewer buyers per second. */
  duplicateClicks: { peakRate: 20, rampUpS: 5, holdS: 15, rampDownS: 5 },
  /** strategy-comparison: per strategy, one after another. */
  comparison: { peakRate: 40, rampUpS: 3, holdS: 10, rampDownS: 3 },
} as const satisfies Record<string, SpikeShape>;

export const DEFAULT_STOCK = { burst: 500, duplicateClicks: 150, comparison: 150, stampede: 100 } as const;
/** soak: a steady stream of buyers over a few sales of large stock, some paying, some cancelling. */
export const DEFAULT_SOAK = { rate: 50, duration: '5m', sales: 3, payRatio: 0.3, cancelRatio: 0.2 } as const;
/** stampede: every buyer in the same millisecond. */
export const DEFAULT_STAMPEDE = { users: 400, answeredWithinS: 10 } as const;
/**
 * strategy-comparison's instant, after each strategy's spike, on a sale of `stock` units: `buyers` in the
 * same millisecond — the race the spike's spread-out arrivals rarely hit — and `lateBuyers` more
 * `lateAfterS` later, as buyers who reload do. A lock strategy's paused holder writes its stale count
 * after the crowd was answered (the lock's TTL + 1 s): the late buyers are the ones who buy the units it
 * put back. `prepS`: seconds every buyer has to sign in and take a token first; `answeredWithinS`: by
 * when, after its arrival, the last buyer must have its answer.
 */
export const DEFAULT_COMPARISON_INSTANT = {
  buyers: 400,
  lateBuyers: 100,
  lateAfterS: 5,
  stock: 50,
  prepS: 6,
  answeredWithinS: 10,
} as const;

/**
 * waiting-room: `early` buyers join in the `startDelayS` before the opening, then `lateRate` a second for
 * `lateSeconds`; the room admits `admitPerSecond` under `maxShopping`. The crowd drains in
 * `early / admitPerSecond` s, then as many late buyers are admitted as units are left: the sale sells out
 * about `stock / admitPerSecond` s after the opening, with late buyers still waiting and arriving.
 */
export const DEFAULT_ROOM = {
  early: 300,
  lateRate: 10,
  lateSeconds: 30,
  stock: 400,
  admitPerSecond: 20,
  maxShopping: 50,
  startDelayS: 15,
  proberEvery: 10,
  maxWaitS: 90,
} as const;

/** Seconds from the first arrival to the last. */
export function shapeSeconds(shape: SpikeShape): number {
  return shape.rampUpS + shape.holdS + shape.rampDownS;
}

/** Arrivals the shape asks for: the area under the rate curve. */
export function plannedArrivals(shape: SpikeShape): number {
  return Math.round(shape.peakRate * (shape.rampUpS / 2 + shape.holdS + shape.rampDownS / 2));
}

/** The k6 scenario of a spike; `iterationSeconds` sizes the VU pool (VUs busy = rate × iteration time). */
export function spikeScenario(
  shape: SpikeShape,
  iterationSeconds: number,
  extra: Partial<RampingArrivalRateScenario> = {},
): RampingArrivalRateScenario {
  const busy = Math.ceil(shape.peakRate * iterationSeconds);
  return {
    executor: 'ramping-arrival-rate',
    startRate: 0,
    timeUnit: '1s',
    stages: [
      { duration: `${shape.rampUpS}s`, target: shape.peakRate },
      { duration: `${shape.holdS}s`, target: shape.peakRate },
      { duration: `${shape.rampDownS}s`, target: 0 },
    ],
    // Enough VUs for twice the expected work; past maxVUs k6 drops arrivals (`dropped_iterations`),
    // which the report calls out: the API could not keep up with the shape.
    preAllocatedVUs: Math.max(10, busy * 2),
    maxVUs: Math.max(50, busy * 10),
    gracefulStop: '30s',
    ...extra,
  };
}
