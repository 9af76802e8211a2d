// The two verdicts of every report, decided from k6's end-of-test data alone (pure: unit-tested with
// recorded summaries in verdict.spec.ts).
//
//   Correctness  the audit and the contract: nothing oversold, no duplicate, no lost reservation, books
//                balanced, per-user limits and replays kept, every answer one the contract promises.
//                Always gates: its thresholds are always built, so k6 exits 99 when it fails.
//   Latency      the p95 bounds (or, for the stampede, how fast every buyer was answered; for the waiting
//                room, its fairness too: "Fairness" there). Gates by default; with LATENCY_GATE=off its
//                thresholds are built as `>=0` (never crossed) and the verdict is only reported.
import { count, fmt, fmtMs, stat } from './summary-data.ts';
import { roomCorrectnessFact } from './room-words.ts';
import { roomFiguresFromSummary } from './waiting-room.ts';

/**
 * Metrics whose thresholds are about speed (and the waiting room's fairness): they make the Latency
 * verdict, every other one Correctness.
 */
export const SPEED_METRICS = [
  'http_req_duration',
  'purchase_duration',
  'answered_after_opening',
  'purchase_gave_up',
  'room_inversions',
  'room_ahead_of_crowd',
  'room_eta_error_p90',
  'room_eta_unmeasured',
];

export interface LatencyBound {
  /** As the report names it, e.g. `purchase p95` (after its strategy, when it has one). */
  label: string;
  /**
   * The strategy the bound judges, when a run judges several alike (the comparison): the verdict then
   * names the bounds once, and a strategy only where it crossed one.
   */
  strategy?: string;
  /** A metric or sub-metric of the summary, e.g. `http_req_duration{scenario:burst}`. */
  metric: string;
  /** A stat of it, e.g. `p(95)` or `max`. */
  stat: string;
  /** The value must stay below this. */
  below: number;
  /** `ms` (the default), `count` (e.g. buyers who gave up: below 1) or `percent`. */
  unit?: 'ms' | 'count' | 'percent';
  /**
   * False: an expectation, reported beside the value, that never fails the run (the comparison's
   * strategies other than the default one, whose slowness under a spike is what the comparison shows).
   */
  gates?: boolean;
}

/** No buyer left still told "retry later" after RETRY_LATER_SECONDS (lib/flows.ts, lib/room-buyer.ts): the API kept up. */
export function gaveUpBound(): LatencyBound {
  return { label: 'buyers who gave up on 429/503', metric: 'purchase_gave_up', stat: 'count', below: 1, unit: 'count' };
}

/** Whether a bound can fail the run (when latency gates at all: LATENCY_GATE). */
export const boundGates = (bound: LatencyBound): boolean => bound.gates !== false;

function show(bound: LatencyBound, value: number): string {
  if (bound.unit === 'percent') return `${fmt(value)} %`;
  return bound.unit === 'count' ? fmt(value) : fmtMs(value);
}

export interface VerdictSpec {
  latencyBounds: readonly LatencyBound[];
  /** False when LATENCY_GATE=off: the latency verdict is reported but does not fail the run. */
  latencyGates: boolean;
  /**
   * Strategies of the run that exist to oversell (the comparison's UNSAFE ones): their oversold units
   * are not judged, and a passing verdict names them as the expected finding.
   */
  unsafe?: readonly string[];
  /** What a scenario adds to a passing verdict's reason (the waiting room's figures). */
  passNotes?: { correctness?: (data: K6SummaryData) => string; latency?: (data: K6SummaryData) => string };
}

export interface Verdict {
  pass: boolean;
  reason: string;
  /** Whether this verdict decides k6's exit code. */
  gates: boolean;
}

export interface Verdicts {
  correctness: Verdict;
  latency: Verdict;
  /** Correctness, and latency when it gates: what k6's exit code says (0 or 99). */
  pass: boolean;
}

function baseName(metric: string): string {
  const brace = metric.indexOf('{');
  return brace < 0 ? metric : metric.slice(0, brace);
}

function tagOf(metric: string): string {
  const brace = metric.indexOf('{');
  return brace < 0 ? '' : ` ${metric.slice(brace)}`;
}

/** Failed thresholds as `[metric, expression]`, sorted. */
export function failedThresholds(data: K6SummaryData): Array<[string, string]> {
  const failed: Array<[string, string]> = [];
  for (const [name, metric] of Object.entries(data.metrics)) {
    for (const [source, result] of Object.entries(metric.thresholds ?? {})) {
      if (!result.ok) failed.push([name, source]);
    }
  }
  return failed.sort((a, b) => (a[0] + a[1] < b[0] + b[1] ? -1 : 1));
}

/** Checks with failures, as `name (passes ✓ / fails ✗)`, from every group. */
export function failedChecks(data: K6SummaryData): string[] {
  const failed: string[] = [];
  const visit = (group: K6SummaryGroup): void => {
    for (const c of group.checks) if (c.fails > 0) failed.push(`${c.name} (${c.passes} ✓ / ${c.fails} ✗)`);
    for (const g of group.groups) visit(g);
  };
  visit(data.root_group);
  return failed;
}

export function setupCompleted(data: K6SummaryData): boolean {
  return count(data, 'setup_completed') > 0;
}

/** Guest sign-ins answered `429`: the API runs with the per-IP sign-in limits of the standard profile. */
export function signInsLimited(data: K6SummaryData): { limited: number; attempts: number } {
  return {
    limited: count(data, 'sign_in_rate_limited'),
    attempts: stat(data, 'http_req_duration{endpoint:auth_guest}', 'count') ?? 0,
  };
}

/** The order facts are told in: what a reader must see first (an oversell) first. */
const FACT_ORDER = [
  'setup_completed',
  'oversold_units',
  'purchase_accepted',
  'audit_violations',
  'purchase_unexpected',
  'request_unexpected',
  'replay_mismatch',
  'limit_exceeded',
  'room_judged',
  'room_tokens_without_pass',
  'room_admitted_then_sold_out',
  'room_notices_failed',
  'room_sold_out',
];

function factRank(metric: string): number {
  const rank = FACT_ORDER.indexOf(baseName(metric));
  return rank < 0 ? FACT_ORDER.length : rank;
}

/** One phrase per failed correctness threshold, naming what broke and how much. */
function correctnessFact(data: K6SummaryData, metric: string, expression: string): string {
  const tags = tagOf(metric);
  if (baseName(metric).startsWith('room_')) {
    const fact = roomCorrectnessFact(baseName(metric), roomFiguresFromSummary(data));
    if (fact) return fact;
  }
  switch (baseName(metric)) {
    case 'oversold_units': {
      const oversold = stat(data, metric, 'max') ?? stat(data, metric, 'value');
      const held = stat(data, metric.replace('oversold_units', 'held_units'), 'max');
      const heldNote =
        held === undefined || oversold === undefined ? '' : `: held ${fmt(held)} of a stock of ${fmt(held - oversold)}`;
      return `OVERSOLD ${fmt(oversold)} unit(s)${tags}${heldNote}`;
    }
    case 'audit_violations':
      return (
        `audit not clean${tags}: ${fmt(count(data, metric))} violation(s) — duplicate orders ` +
        `${fmt(stat(data, metric.replace('audit_violations', 'duplicate_orders'), 'max'))}, lost reservations ` +
        `${fmt(stat(data, metric.replace('audit_violations', 'lost_reservations'), 'max'))}`
      );
    case 'purchase_unexpected':
      return `${count(data, metric)} purchase answer(s) outside the contract${tags}`;
    case 'request_unexpected': {
      const limited = count(data, 'sign_in_rate_limited');
      const note = limited > 0 ? ` (${limited} of them sign-ins refused 429)` : '';
      return `${count(data, metric)} other call(s) broke the contract${tags}${note}`;
    }
    case 'purchase_accepted':
      return `accepted ${count(data, metric)} purchase(s)${tags}, expected ${expression.replace('count', '')}`;
    case 'replay_mismatch':
      return `${count(data, metric)} buyer(s) got different answers to replays of one token`;
    case 'limit_exceeded':
      return `${count(data, metric)} buyer(s) hold more orders than the per-user limit`;
    case 'checks': {
      const first = failedChecks(data)[0];
      return `checks failed${tags}${first ? `: ${first}` : ''}`;
    }
    case 'setup_completed':
      return 'setup did not complete';
    default:
      return `${metric}: ${expression} crossed`;
  }
}

/**
 * A strategy's oversold units: the sum of its sales' `oversold_units{strategy:…,…}` gauges (one per
 * audited sale); undefined when none was audited.
 */
export function oversoldOf(data: K6SummaryData, strategy: string): number | undefined {
  const own = Object.keys(data.metrics).filter(
    (name) =>
      name.startsWith(`oversold_units{strategy:${strategy},`) || name === `oversold_units{strategy:${strategy}}`,
  );
  // Per sale when there are several (`…,phase:…}`), else the strategy's one.
  const perSale = own.filter((name) => name.includes(','));
  const values = (perSale.length > 0 ? perSale : own).map((name) => stat(data, name, 'value'));
  if (values.length === 0 || values.some((v) => v === undefined)) return undefined;
  return values.reduce<number>((total, v) => total + (v ?? 0), 0);
}

export function correctnessVerdict(
  data: K6SummaryData,
  unsafe: readonly string[] = [],
  passNote?: (data: K6SummaryData) => string,
): Verdict {
  if (!setupCompleted(data)) {
    return { pass: false, gates: true, reason: 'setup did not complete (see the error above): nothing was tested' };
  }
  const failed = failedThresholds(data)
    .filter(([metric]) => !SPEED_METRICS.includes(baseName(metric)))
    .sort((a, b) => factRank(a[0]) - factRank(b[0]));
  if (failed.length > 0) {
    // `checks` repeats what the audit and contract facts already say; keep it only when alone.
    const facts = failed.map(([metric, expression]) => correctnessFact(data, metric, expression));
    const specific = facts.filter((fact) => !fact.startsWith('checks failed'));
    return { pass: false, gates: true, reason: [...new Set(specific.length > 0 ? specific : facts)].join('; ') };
  }
  // One sale's held units; with a sale per strategy, each strategy's row of the report says its own.
  const perStrategy = Object.keys(data.metrics).some((name) => name.startsWith('held_units{'));
  const held = perStrategy ? undefined : stat(data, 'held_units', 'max');
  const answers =
    count(data, 'purchase_accepted') + count(data, 'purchase_sold_out') + count(data, 'purchase_limit_reached');
  const contract = `every answer in the contract (${answers} purchase answers)`;
  if (unsafe.length > 0) {
    const findings = unsafe.map((s) => `${s} oversold ${fmt(oversoldOf(data, s))}`).join(', ');
    return {
      pass: true,
      gates: true,
      reason: `every guarded strategy 0 oversold, audits clean; ${contract}; UNSAFE by design: ${findings}`,
    };
  }
  const note = passNote ? `; ${passNote(data)}` : '';
  return {
    pass: true,
    gates: true,
    reason: `0 oversold, audit clean${held === undefined ? '' : ` (held ${fmt(held)})`}, ${contract}${note}`,
  };
}

/** A latency bound and the run's value of it (undefined: not measured). */
export interface JudgedBound {
  bound: LatencyBound;
  value?: number;
  /** Measured and below its bound. */
  pass: boolean;
}

export function judgeBounds(data: K6SummaryData, bounds: readonly LatencyBound[]): JudgedBound[] {
  return bounds.map((bound) => {
    const value = stat(data, bound.metric, bound.stat);
    return { bound, value, pass: value !== undefined && value < bound.below };
  });
}

/** `purchase p95 572 ms ≥ 500 ms`, or `buyers who gave up 3` for a count (its bound is "none"). */
export function overBound({ bound, value }: JudgedBound): string {
  const name = bound.strategy ? `${bound.strategy} ${bound.label}` : bound.label;
  return bound.unit === 'count'
    ? `${name} ${fmt(value)}`
    : `${name} ${show(bound, value ?? 0)} ≥ ${show(bound, bound.below)}`;
}

/** Failures named in the one-line verdict; a comparison's table carries the rest. */
const NAMED_FAILURES = 4;

export function latencyVerdict(data: K6SummaryData, spec: VerdictSpec): Verdict {
  const gates = spec.latencyGates;
  const suffix = gates ? '' : ' — not gating (LATENCY_GATE=off)';
  if (!setupCompleted(data)) return { pass: false, gates, reason: `not measured (setup did not complete)${suffix}` };
  const measured = judgeBounds(data, spec.latencyBounds).filter((m) => m.value !== undefined);
  if (measured.length === 0) return { pass: false, gates, reason: `nothing measured${suffix}` };
  const gating = measured.filter((m) => boundGates(m.bound));
  // Expectations only: named when crossed, never failing the run.
  const expectedOver = measured.filter((m) => !boundGates(m.bound) && !m.pass);
  const expectations =
    expectedOver.length > 0 ? `; over their expectation, reported only: ${namedFailures(expectedOver)}` : '';
  const strategiesOf = (judged: JudgedBound[]) => [
    ...new Set(judged.map((m) => m.bound.strategy).filter((s): s is string => s !== undefined)),
  ];
  const strategies = strategiesOf(measured);
  const over = gating.filter((m) => !m.pass);
  if (over.length > 0) {
    const where = strategies.length > 0 ? ' (per strategy in the report)' : '';
    return { pass: false, gates, reason: `${namedFailures(over)}${where}${expectations}${suffix}` };
  }
  if (gating.length === 0) {
    return { pass: true, gates, reason: `no bound gates this run, every one reported${expectations}${suffix}` };
  }
  // A count of 0 goes without saying when it passes.
  const shown = gating.filter((m) => m.bound.unit !== 'count');
  const gatingStrategies = strategiesOf(gating);
  if (gatingStrategies.length > 0) {
    // The same bounds for every strategy: said once, with each one's values in the report's table.
    const kinds = new Map<string, LatencyBound>();
    for (const { bound } of shown) if (!kinds.has(bound.label)) kinds.set(bound.label, bound);
    const list = [...kinds.values()].map((b) => `${b.label} < ${show(b, b.below)}`).join(', ');
    const each =
      gatingStrategies.length === 1 ? `${gatingStrategies[0]}` : `each of ${gatingStrategies.length} strategies`;
    return { pass: true, gates, reason: `${each} within its bounds: ${list}${expectations}${suffix}` };
  }
  const list = shown.map((m) => `${m.bound.label} ${show(m.bound, m.value ?? 0)} < ${show(m.bound, m.bound.below)}`);
  const note = spec.passNotes?.latency ? [spec.passNotes.latency(data)] : [];
  return { pass: true, gates, reason: `${[...note, ...list].join(', ')}${expectations}${suffix}` };
}

/** The first few bounds crossed, by name; a comparison's table carries the rest. */
function namedFailures(over: readonly JudgedBound[]): string {
  const named = over.slice(0, NAMED_FAILURES).map(overBound).join(', ');
  return `${named}${over.length > NAMED_FAILURES ? ` and ${over.length - NAMED_FAILURES} more` : ''}`;
}

export function verdicts(data: K6SummaryData, spec: VerdictSpec): Verdicts {
  const correctness = correctnessVerdict(data, spec.unsafe, spec.passNotes?.correctness);
  const latency = latencyVerdict(data, spec);
  return { correctness, latency, pass: correctness.pass && (latency.pass || !latency.gates) };
}
