// Settings from `-e NAME=value` (or the environment with --include-system-env-vars), read once in the
// init context. A bad value stops the run before any VU starts, naming the variable.

import { SALE_STRATEGIES, type SaleStrategy } from '../../libs/contract/src/sale.ts';
import type { SpikeShape } from './shapes.ts';

function raw(name: string): string | undefined {
  const value = __ENV[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

export function envString(name: string, fallback: string): string {
  return raw(name) ?? fallback;
}

/** A number within [min, max] that `valid` accepts (`kind` names it in the error), or `fallback` if unset. */
function envBounded(
  name: string,
  fallback: number,
  min: number,
  max: number,
  kind: { valid: (value: number) => boolean; name: string },
): number {
  const value = raw(name);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!kind.valid(parsed) || parsed < min || parsed > max) {
    throw new Error(`${name} must be ${kind.name} between ${min} and ${max}, got "${value}"`);
  }
  return parsed;
}

export function envInt(name: string, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  return envBounded(name, fallback, min, max, { valid: Number.isInteger, name: 'an integer' });
}

export function envNumber(name: string, fallback: number, min: number, max: number): number {
  return envBounded(name, fallback, min, max, { valid: Number.isFinite, name: 'a number' });
}

/** A k6 duration such as `90s`, `5m` or `1h30m`; returned as given (k6 parses it) and in seconds. */
export function envDuration(name: string, fallback: string): { text: string; seconds: number } {
  const text = envString(name, fallback);
  const match = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  if (!match || text === '') throw new Error(`${name} must be a duration like 90s, 5m or 1h30m, got "${text}"`);
  const seconds = Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0);
  if (seconds <= 0) throw new Error(`${name} must be longer than 0s, got "${text}"`);
  return { text, seconds };
}

/** `on`/`off` (also true/false, 1/0, yes/no). */
export function envSwitch(name: string, fallback: boolean): boolean {
  const value = raw(name)?.toLowerCase();
  if (value === undefined) return fallback;
  if (['on', 'true', '1', 'yes'].includes(value)) return true;
  if (['off', 'false', '0', 'no'].includes(value)) return false;
  throw new Error(`${name} must be on or off, got "${value}"`);
}

/** A spike from PEAK_RATE (arrivals/s), RAMP_UP, HOLD and RAMP_DOWN (seconds), each defaulting to `shape`'s. */
export function envSpike(shape: SpikeShape): SpikeShape {
  return {
    peakRate: envInt('PEAK_RATE', shape.peakRate, 1, 100_000),
    rampUpS: envInt('RAMP_UP', shape.rampUpS, 0, 3600),
    holdS: envInt('HOLD', shape.holdS, 0, 86_400),
    rampDownS: envInt('RAMP_DOWN', shape.rampDownS, 0, 3600),
  };
}

export function envStrategy(name: string, fallback: SaleStrategy): SaleStrategy {
  const value = envString(name, fallback);
  if (!isStrategy(value)) throw new Error(`${name} must be one of ${SALE_STRATEGIES.join(', ')}, got "${value}"`);
  return value;
}

export function envStrategies(name: string, fallback: readonly SaleStrategy[]): SaleStrategy[] {
  const value = raw(name);
  if (value === undefined) return [...fallback];
  const list = value.split(',').map((item) => item.trim());
  const unknown = list.filter((item) => !isStrategy(item));
  if (unknown.length > 0 || list.length === 0) {
    throw new Error(`${name} must be a comma-separated list of ${SALE_STRATEGIES.join(', ')}, got "${value}"`);
  }
  return SALE_STRATEGIES.filter((strategy) => list.includes(strategy));
}

export function isStrategy(value: string): value is SaleStrategy {
  return (SALE_STRATEGIES as readonly string[]).includes(value);
}

/** What every scenario shares. */
export interface CommonConfig {
  /** Origin of the API, without `/api` and without a trailing slash. */
  baseUrl: string;
  adminPassword: string;
  /** Bound of the p(95) latency thresholds, in ms. */
  p95Ms: number;
  /**
   * LATENCY_GATE (on by default): whether the latency bounds fail the run. Off, they are only
   * reported — for demos on a busy machine, where only correctness should decide the exit code.
   */
  latencyGates: boolean;
  /** How long teardown waits, per sale, for the order queue to drain before auditing. */
  quietTimeoutSeconds: number;
  /** Where handleSummary writes `<scenario>-<time>.txt`, `.json` and `.html`. */
  resultsDir: string;
  /** Per-request timeout. */
  httpTimeout: string;
}

export function commonConfig(): CommonConfig {
  return {
    baseUrl: envString('BASE_URL', 'http://localhost:3000').replace(/\/+$/, ''),
    adminPassword: envString('ADMIN_PASSWORD', 'admin'),
    p95Ms: envInt('P95_MS', 500),
    latencyGates: envSwitch('LATENCY_GATE', true),
    quietTimeoutSeconds: envInt('QUIET_TIMEOUT', 60),
    // Relative to the directory k6 runs in: the repository root in the README's commands.
    resultsDir: envString('RESULTS_DIR', 'load-tests/results').replace(/\/+$/, ''),
    httpTimeout: envString('HTTP_TIMEOUT', '30s'),
  };
}

/** A run id that keeps sale names (and guest names) of different runs apart. */
export function runId(): string {
  return `${Date.now().toString(36)}${Math.floor(Math.random() * 1296)
    .toString(36)
    .padStart(2, '0')}`;
}
