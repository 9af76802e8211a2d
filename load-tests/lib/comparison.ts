// The strategy comparison's result per strategy, from k6's end-of-test data: what each strategy sold
// against its stock (oversold units from the audits), how it answered (accepted, refused, answers per
// second at the instant, p95 on the spike), whether that is what it claims to be, and its latency
// against its bounds. Pure (no k6 module): the text and HTML reports draw it, comparison.spec.ts tests it.
//
// Each strategy has two sales: one for its spike (arrivals spread over seconds: p95 means something)
// and one for its instant (every buyer in the same millisecond: the race, judged by how soon the last
// buyer was answered). Samples are tagged `strategy` and `phase` (spike | instant).
import { count, fmt, fmtMs, stat, table } from './summary-data.ts';
import { boundGates, type JudgedBound, judgeBounds, type LatencyBound, overBound } from './verdict.ts';

export const PHASES = ['spike', 'instant'] as const;
export type Phase = (typeof PHASES)[number];

/** A strategy's sub-metric (`name{strategy:s}`), or one of its phase's (`name{strategy:s,phase:p}`). */
export function ofStrategy(metric: string, strategy: string, phase?: Phase): string {
  return phase === undefined ? `${metric}{strategy:${strategy}}` : `${metric}{strategy:${strategy},phase:${phase}}`;
}

/** The k6 scenario of a strategy's spike is named after the strategy; its instant's, this. */
export function instantScenario(strategy: string): string {
  return `${strategy}-instant`;
}

/** The metric of the instant's bound: ms from a buyer's arrival to its final answer (lib/flows.ts). */
export const ANSWERED_AFTER_OPENING = 'answered_after_opening';

/** The instant's crowd alone (not its late buyers): its answers per second. */
export const CROWD_ANSWERED = (strategy: string): string =>
  `${ANSWERED_AFTER_OPENING}{strategy:${strategy},wave:crowd}`;

/**
 * A strategy's latency bounds: where each measure means something. On the spike (arrivals spread over
 * time) the purchase p95 and every request's p95; on the instant (every buyer at once, so each waits
 * behind the others) how soon the last buyer was answered; on both, no buyer left giving up.
 */
export function strategyLatencyBounds(
  strategy: string,
  bounds: { p95Ms: number; answeredWithinMs: number },
  gates = true,
): LatencyBound[] {
  const judged: LatencyBound[] = [
    {
      strategy,
      label: 'spike purchase p95',
      metric: ofStrategy('purchase_duration', strategy, 'spike'),
      stat: 'p(95)',
      below: bounds.p95Ms,
    },
    {
      strategy,
      label: 'spike every request p95',
      metric: `http_req_duration{scenario:${strategy}}`,
      stat: 'p(95)',
      below: bounds.p95Ms,
    },
    {
      strategy,
      label: 'instant last buyer answered',
      metric: ofStrategy(ANSWERED_AFTER_OPENING, strategy),
      stat: 'max',
      below: bounds.answeredWithinMs,
    },
    {
      strategy,
      label: 'buyers who gave up on 429/503',
      metric: ofStrategy('purchase_gave_up', strategy),
      stat: 'count',
      below: 1,
      unit: 'count',
    },
  ];
  return judged.map((bound) => ({ ...bound, gates }));
}

export interface ComparisonSpec {
  /** The compared strategies, in the report's order. */
  strategies: readonly string[];
  /** Those that exist to oversell: their oversold units are the finding (UNSAFE), never a failure. */
  unsafe: readonly string[];
  /** Units of each strategy's spike sale and of its instant sale. */
  stock: Record<Phase, number>;
  /** Strategies whose instant had a lock holder paused past the lock's TTL (PAUSE_LOCK_HOLDER). */
  pausedLockHolder: readonly string[];
  /** Every strategy's latency bounds (strategyLatencyBounds). */
  latencyBounds: readonly LatencyBound[];
  /** Seconds from the load's start to each strategy's turn, in `strategies`' order: marked over time. */
  startsAt?: readonly number[];
}

/**
 * What a strategy's sales show: `safe` (0 oversold, audit clean, the contract kept), `oversold` (an
 * UNSAFE strategy did what it exists to show), `race-missed` (an UNSAFE strategy sold no more than its
 * stock this run: the demonstration missed, not the system), `broken` (a strategy that claims to be
 * safe oversold, or an audit or answer failed).
 */
export type Finding = 'safe' | 'oversold' | 'race-missed' | 'broken';

export interface StrategyResult {
  strategy: string;
  unsafe: boolean;
  /** Units of both sales. */
  stock: number;
  /** Purchases answered 201/202 (both sales). */
  accepted: number;
  /** Purchases answered 410 SOLD_OUT or 409 LIMIT_REACHED: a correct "no". */
  refused: number;
  /** From the audits: units held beyond the stock, both sales; undefined when a sale was not audited. */
  oversold?: number;
  oversoldByPhase: Partial<Record<Phase, number>>;
  /** Units held (PENDING_PAYMENT + PAID) at the end, both sales. */
  held?: number;
  /** Both audits ok and their queues drained. */
  auditOk: boolean;
  /** Answers outside the contract: purchases and every other call. */
  unexpected: number;
  /** `429`/`503` + `retry-after` answers waited out and sent again (the paused holder's refused write is one). */
  retriedLater: number;
  spikeP50?: number;
  spikeP95?: number;
  /**
   * Buyers of the instant answered (the late ones too) and the longest any waited for its answer; the
   * crowd's answers per second, until its last answer.
   */
  instantAnswered: number;
  instantLastMs?: number;
  instantPerSecond?: number;
  /** Whether the instant had its paused lock holder. */
  pausedLockHolder: boolean;
  finding: Finding;
  /** The finding in words, e.g. `UNSAFE: oversold 180 unit(s), as expected`. */
  verdict: string;
  /** Within every bound; `gates`: whether those bounds can fail the run, or are its expectation only. */
  latency: { pass: boolean; gates: boolean; judged: JudgedBound[] };
}

function sum(values: Array<number | undefined>): number | undefined {
  return values.some((v) => v === undefined) ? undefined : values.reduce<number>((a, v) => a + (v ?? 0), 0);
}

function findingOf(row: Omit<StrategyResult, 'finding' | 'verdict'>): { finding: Finding; verdict: string } {
  const { oversold, oversoldByPhase } = row;
  if (row.unsafe) {
    if (oversold === undefined) return { finding: 'broken', verdict: 'UNSAFE, NOT AUDITED' };
    if (oversold > 0) {
      const where = PHASES.filter((p) => (oversoldByPhase[p] ?? 0) > 0)
        .map((p) => `${p} ${oversoldByPhase[p]}`)
        .join(', ');
      return { finding: 'oversold', verdict: `UNSAFE: oversold ${oversold} unit(s) (${where}), as expected` };
    }
    const hint = row.strategy.startsWith('redis-lock') && !row.pausedLockHolder ? ' (no paused lock holder)' : '';
    return { finding: 'race-missed', verdict: `UNSAFE by design, but the race was missed this run${hint}` };
  }
  if (oversold === undefined) return { finding: 'broken', verdict: 'NOT AUDITED' };
  if (oversold > 0) return { finding: 'broken', verdict: `OVERSOLD ${oversold} unit(s): BUG` };
  if (!row.auditOk) return { finding: 'broken', verdict: 'audit NOT ok' };
  if (row.unexpected > 0)
    return { finding: 'broken', verdict: `safe, but ${row.unexpected} answer(s) outside the contract` };
  return { finding: 'safe', verdict: 'safe: 0 oversold, audit clean' };
}

/** Every compared strategy's result, in the spec's order. */
export function compareStrategies(data: K6SummaryData, spec: ComparisonSpec): StrategyResult[] {
  return spec.strategies.map((strategy) => {
    const of = (metric: string, phase?: Phase) => ofStrategy(metric, strategy, phase);
    const oversoldByPhase: Partial<Record<Phase, number>> = {};
    for (const phase of PHASES) {
      const value = stat(data, of('oversold_units', phase), 'value');
      if (value !== undefined) oversoldByPhase[phase] = value;
    }
    const lastMs = stat(data, of(ANSWERED_AFTER_OPENING), 'max');
    const answered = stat(data, of(ANSWERED_AFTER_OPENING), 'count') ?? 0;
    const crowd = {
      answered: stat(data, CROWD_ANSWERED(strategy), 'count'),
      lastMs: stat(data, CROWD_ANSWERED(strategy), 'max'),
    };
    const judged = judgeBounds(
      data,
      spec.latencyBounds.filter((bound) => bound.strategy === strategy),
    ).filter((j) => j.value !== undefined);
    const row = {
      strategy,
      unsafe: spec.unsafe.includes(strategy),
      stock: spec.stock.spike + spec.stock.instant,
      accepted: count(data, of('purchase_accepted')),
      refused: count(data, of('purchase_sold_out')) + count(data, of('purchase_limit_reached')),
      oversold: sum(PHASES.map((p) => oversoldByPhase[p])),
      oversoldByPhase,
      held: sum(PHASES.map((p) => stat(data, of('held_units', p), 'value'))),
      auditOk: PHASES.every((p) => stat(data, of('audit_ok', p), 'value') === 1),
      unexpected: count(data, of('purchase_unexpected')) + count(data, of('request_unexpected')),
      retriedLater: count(data, of('purchase_retried_later')),
      spikeP50: stat(data, of('purchase_duration', 'spike'), 'med'),
      spikeP95: stat(data, of('purchase_duration', 'spike'), 'p(95)'),
      instantAnswered: answered,
      instantLastMs: lastMs,
      instantPerSecond:
        crowd.answered !== undefined && crowd.lastMs !== undefined && crowd.lastMs > 0
          ? (crowd.answered * 1000) / crowd.lastMs
          : undefined,
      pausedLockHolder: spec.pausedLockHolder.includes(strategy),
      latency: {
        pass: judged.length > 0 && judged.every((j) => j.pass),
        gates: judged.some((j) => boundGates(j.bound)),
        judged,
      },
    };
    return { ...row, ...findingOf(row) };
  });
}

/** UNSAFE strategies whose race was missed: the report says so first, as it is what a viewer came to see. */
export function missedRaces(results: readonly StrategyResult[]): string[] {
  return results.filter((r) => r.finding === 'race-missed').map((r) => r.strategy);
}

/** The measures of the latency table, in the bounds' order (each strategy has the same ones). */
export function latencyColumns(spec: ComparisonSpec): LatencyBound[] {
  const seen = new Map<string, LatencyBound>();
  for (const bound of spec.latencyBounds) if (!seen.has(bound.label)) seen.set(bound.label, bound);
  return [...seen.values()];
}

/** A bound's value as its cell shows it: `12 ms`, `1.2 s`, `0`. */
export function showValue(bound: LatencyBound, value: number | undefined): string {
  if (value === undefined) return '—';
  return bound.unit === 'count' ? fmt(value) : fmtMs(value);
}

export function boundText(bound: LatencyBound): string {
  return bound.unit === 'count' ? 'none' : `< ${fmtMs(bound.below)}`;
}

export const RESULT_COLUMNS = [
  'strategy',
  'oversold',
  'accepted',
  'refused',
  'instant answers/s',
  'spike p95',
  'verdict',
] as const;

/** A result row's cells, as both reports show them (RESULT_COLUMNS). */
export function resultCells(r: StrategyResult): string[] {
  return [
    r.unsafe ? `${r.strategy} (UNSAFE)` : r.strategy,
    fmt(r.oversold),
    `${r.accepted} of ${r.stock}`,
    String(r.refused),
    r.instantPerSecond === undefined ? '—' : String(Math.round(r.instantPerSecond)),
    fmtMs(r.spikeP95),
    r.verdict,
  ];
}

/** The latency table's cells of one strategy (latencyColumns, then PASS or FAIL). */
export function latencyCells(r: StrategyResult, columns: readonly LatencyBound[]): string[] {
  const cells = columns.map((column) => {
    const judged = r.latency.judged.find((j) => j.bound.label === column.label);
    if (!judged) return '—';
    // ✗ a bound that gates, ⚠ an expectation (reported only).
    return `${showValue(column, judged.value)}${judged.pass ? '' : boundGates(judged.bound) ? ' ✗' : ' ⚠'}`;
  });
  return [r.strategy, ...cells, latencyWord(r)];
}

/** PASS, FAIL (a bound that gates was crossed), or SLOWER THAN EXPECTED (an expectation only). */
export function latencyWord(r: StrategyResult): string {
  if (r.latency.pass) return 'PASS';
  return r.latency.gates ? 'FAIL' : 'SLOWER THAN EXPECTED';
}

/** What the load of each strategy was, in one line: `spike` and `instant` say what each was. */
export function comparisonLoad(spec: ComparisonSpec, spike: string, instant: string): string {
  const paused =
    spec.pausedLockHolder.length > 0 ? `; ${spec.pausedLockHolder.join(', ')}: a lock holder paused past its TTL` : '';
  return (
    `per strategy, one after another: ${spike} on a sale of ${spec.stock.spike} units, then ${instant} on a ` +
    `sale of ${spec.stock.instant} units${paused}`
  );
}

/** The comparison in the text report: the result per strategy, then its latency. */
export function comparisonLines(data: K6SummaryData, spec: ComparisonSpec): string[] {
  const results = compareStrategies(data, spec);
  const columns = latencyColumns(spec);
  const missed = missedRaces(results);
  const failed = results.flatMap((r) => r.latency.judged.filter((j) => !j.pass));
  return [
    ...(missed.length > 0
      ? [`!! RACE MISSED: ${missed.join(', ')} sold no more than the stock this run (see load-tests/README.md)`]
      : []),
    `Per strategy (stock ${spec.stock.spike} on the spike + ${spec.stock.instant} at the instant; oversold from the audits)`,
    ...table([[...RESULT_COLUMNS], ...results.map(resultCells)]).map((line) => `  ${line}`),
    `Latency per strategy (${columns.map((c) => `${c.label} ${boundText(c)}`).join(', ')})`,
    ...table([
      ['strategy', ...columns.map((c) => c.label), 'latency'],
      ...results.map((r) => latencyCells(r, columns)),
    ]).map((line) => `  ${line}`),
    ...failed.map((j) =>
      boundGates(j.bound) ? `  ✗ ${overBound(j)}` : `  · ${overBound(j)} (expected, reported only)`,
    ),
    ...(results.some((r) => !r.latency.gates)
      ? [
          `Latency gates only where a bound is marked to (${
            results
              .filter((r) => r.latency.gates)
              .map((r) => r.strategy)
              .join(', ') || 'none this run'
          }); every other strategy's is its expectation, reported beside it: how much slower a strategy is under a ` +
            'spike is what the comparison shows.',
        ]
      : []),
    ...(results.some((r) => r.unsafe)
      ? [
          'UNSAFE strategies exist to oversell: naive-unsafe reads, checks and writes with no guard; redis-lock-unfenced ' +
            'trusts a lock its paused holder has lost. Their oversold units are the finding, not a failure.',
        ]
      : []),
  ];
}
