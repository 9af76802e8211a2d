// Bot swarm: a few bots try to buy far above the rate limits while honest buyers shop normally.
//
// BOTS signed-in bots each loop for DURATION as fast as k6 can: a submit token, then purchases with
// it (the first buys, the rest replay or are refused), plus purchases with made-up tokens. HONEST
// buyers sign in, take a token, and buy once when the sale opens, waiting out any `429` with its
// `retry-after` and sending the same token again (as the storefront does). The thresholds assert that
// the limits held — each bot was admitted at most its per-user budget per window, every refusal was
// `429 RATE_LIMITED` with `retry-after` — that every honest buyer got a unit, and that the audit is ok.
//
// The API must run with the per-user limits it ships with (PURCHASE_LIMIT per PURCHASE_WINDOW seconds,
// TOKEN_LIMIT per TOKEN_WINDOW — the defaults below match the `standard` profile). k6 signs everyone in
// from one address, so start the API with RATE_LIMIT_PROFILE=load-test (or RATE_LIMIT_TRUSTED_IPS=<this
// machine>): that lifts only the per-IP sign-in limits (docs/protection.md).
//
//   RATE_LIMIT_PROFILE=load-test npm start
//   k6 run load-tests/bot-swarm.ts -e BASE_URL=http://localhost:3000 -e BOTS=5 -e HONEST=200
import { check, sleep } from 'k6';
import exec from 'k6/execution';
import http, { type RefinedResponse } from 'k6/http';
import { Counter } from 'k6/metrics';
import type { Options } from 'k6/options';
import { Api, type Session } from './lib/api.ts';
import { SALE_DEFAULTS } from '../libs/contract/src/sale.ts';
import { commonConfig, envInt } from './lib/config.ts';
import { sleepUntil } from './lib/flows.ts';
import { recordPurchase, recordUnexpected } from './lib/metrics.ts';
import { type OneSaleRun, oneSaleRun } from './lib/run.ts';
import { auditLine, burstScenario, p95Bound, runOptions, scenarioThresholds } from './lib/scenario.ts';
import { count, summaryHandler } from './lib/summary.ts';
import { declareTimeline, startTimelineAt } from './lib/timeline.ts';

const config = commonConfig();
const BOTS = envInt('BOTS', 5, 1, 1_000);
const HONEST = envInt('HONEST', 200, 1, 100_000);
const DURATION_S = envInt('DURATION', 20, 5, 3_600);
const START_DELAY = envInt('START_DELAY', 10, 2, 300);
/** The rate limits are the API's, whatever the strategy: the sale has the default one. */
const STRATEGY = SALE_DEFAULTS.strategy;
const PURCHASE_LIMIT = envInt('PURCHASE_LIMIT', 10);
const PURCHASE_WINDOW_S = envInt('PURCHASE_WINDOW', 10);
const TOKEN_LIMIT = envInt('TOKEN_LIMIT', 10);
const TOKEN_WINDOW_S = envInt('TOKEN_WINDOW', 10);
/** Every honest buyer must get a unit, and the bots may take at most one each (per-user limit 1). */
const STOCK = HONEST + BOTS;
const SCENARIO_BOTS = 'bots';
const SCENARIO_HONEST = 'honest';
const BUCKET_SECONDS = declareTimeline(START_DELAY + DURATION_S + 60);
/** The honest buyers' purchases (the bots' are refused on purpose and count for nothing here). */
const LATENCY = [p95Bound(config, 'honest purchase p95', 'purchase_duration')];

/**
 * A fixed window admits at most LIMIT per window; a run of D seconds touches at most ⌈D / W⌉ + 1
 * windows (it may start at the end of one). Anything above this means a limit did not hold.
 */
const windows = (windowS: number) => Math.ceil((DURATION_S + START_DELAY) / windowS) + 1;
const MAX_BOT_PURCHASES = BOTS * PURCHASE_LIMIT * windows(PURCHASE_WINDOW_S);
const MAX_BOT_TOKENS = BOTS * TOKEN_LIMIT * windows(TOKEN_WINDOW_S);

const botPurchasesAdmitted = new Counter('bot_purchases_admitted');
const botPurchasesLimited = new Counter('bot_purchases_rate_limited');
const botTokensAdmitted = new Counter('bot_tokens_admitted');
const botTokensLimited = new Counter('bot_tokens_rate_limited');
/** A refusal that is not `429 RATE_LIMITED` with `retry-after`, or an answer outside docs/api.md. */
const botUnexpected = new Counter('bot_unexpected');
const honestAccepted = new Counter('honest_accepted');
const honestWaits = new Counter('honest_rate_limited_waits');

export const options: Options = {
  scenarios: {
    [SCENARIO_BOTS]: {
      executor: 'constant-vus',
      vus: BOTS,
      duration: `${START_DELAY + DURATION_S}s`,
      exec: 'bot',
    },
    [SCENARIO_HONEST]: burstScenario(HONEST, START_DELAY, {
      maxDuration: `${START_DELAY + DURATION_S + 60}s`,
      exec: 'honest',
    }),
  },
  ...runOptions(config),
  thresholds: scenarioThresholds(config, LATENCY, {
    // The limits held: bounded admissions, and they were actually reached.
    bot_purchases_admitted: [`count<=${MAX_BOT_PURCHASES}`],
    bot_purchases_rate_limited: ['count>0'],
    bot_tokens_admitted: [`count<=${MAX_BOT_TOKENS}`],
    bot_tokens_rate_limited: ['count>0'],
    bot_unexpected: ['count==0'],
    // Honest buyers under the limits got their units.
    honest_accepted: [`count==${HONEST}`],
  }),
};

const api = new Api(config.baseUrl, config.httpTimeout);
const BOT_STATUSES = http.expectedStatuses(201, 202, 403, 409, 410, 429, 503);

export const { setup, teardown } = oneSaleRun(config, {
  scenario: 'bot-swarm',
  about: `${BOTS} bots over the limits, ${HONEST} honest buyers`,
  opensInSeconds: START_DELAY,
  sale: { priceCents: 999, stock: STOCK, perUserLimit: 1, strategy: STRATEGY },
});

/**
 * A refusal at the door as docs/api.md has it, with a `retry-after` of at least one second: `429
 * RATE_LIMITED`, or `503 UNAVAILABLE` when the API sheds load (a busy machine sheds some bots' requests).
 */
function properlyLimited(res: RefinedResponse<'text'>): boolean {
  let code = '';
  try {
    code = (JSON.parse(res.body as string) as { error?: { code?: string } }).error?.code ?? '';
  } catch {
    // not JSON: not the contract's body
  }
  const expected = res.status === 429 ? 'RATE_LIMITED' : 'UNAVAILABLE';
  return code === expected && Number(res.headers['Retry-After']) >= 1;
}

/** Counts a bot's answer: admitted, limited (429, or 503 while shedding load), or unexpected. */
function tally(res: RefinedResponse<'text'>, admitted: Counter, limited: Counter, allowed: number[]): void {
  if (res.status === 429 || res.status === 503) {
    if (properlyLimited(res)) limited.add(1);
    else botUnexpected.add(1);
  } else if (allowed.includes(res.status)) admitted.add(1);
  else botUnexpected.add(1);
}

let botSession: Session | null = null;

export function bot(data: OneSaleRun): void {
  startTimelineAt(data.loadStartMs);
  if (!botSession) {
    const session = api.guest(`k6-bot-${data.runId}-${exec.vu.idInTest}`);
    if (!session.ok) {
      recordUnexpected('auth_guest', session);
      sleep(1);
      return;
    }
    botSession = session.value;
  }
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${botSession.token}` };
  const params = { headers, responseCallback: BOT_STATUSES, tags: { name: 'bot' } };
  const base = `${config.baseUrl}/api/sales/${data.saleId}`;
  const token = http.post(`${base}/tokens`, null, params) as RefinedResponse<'text'>;
  tally(token, botTokensAdmitted, botTokensLimited, [201, 409, 410]);
  let submitToken = `made-up-${exec.vu.iterationInInstance}-token`;
  if (token.status === 201) submitToken = (JSON.parse(token.body as string) as { token: string }).token;
  // A burst of purchases: the token (first buys, then replays) and made-up ones (403 when admitted).
  const responses = http.batch(
    Array.from({ length: 10 }, (_, i) => ({
      method: 'POST',
      url: `${base}/purchase`,
      body: JSON.stringify({ token: i % 2 === 0 ? submitToken : `forged-${i}-${submitToken}` }),
      params,
    })),
  ) as RefinedResponse<'text'>[];
  for (const res of responses) tally(res, botPurchasesAdmitted, botPurchasesLimited, [201, 202, 403, 409, 410]);
}

export function honest(data: OneSaleRun): void {
  startTimelineAt(data.loadStartMs);
  const tags = { scenario_role: 'honest' };
  const session = api.guest(`k6-honest-${data.runId}-${exec.vu.idInTest}`, tags);
  if (!session.ok) return recordUnexpected('auth_guest', session, tags);
  const token = api.submitToken(session.value, data.saleId, tags);
  if (!token.ok) return recordUnexpected('token', token, tags);
  sleepUntil(data.startsAtMs, tags);
  // Like the storefront: a 429 (or a 409 SALE_NOT_STARTED from a clock a little ahead) is retried
  // with the same token after the wait it names.
  for (let attempt = 0; attempt < 20; attempt++) {
    const { outcome, res } = api.purchase(session.value, data.saleId, token.value.token, STRATEGY, { tags });
    if (res.status === 429 && properlyLimited(res)) {
      honestWaits.add(1);
      sleep(Number(res.headers['Retry-After']));
      continue;
    }
    if (outcome.kind === 'not_started') {
      sleep(0.05);
      continue;
    }
    recordPurchase(outcome, res.timings.duration, tags);
    if (outcome.kind === 'accepted') honestAccepted.add(1);
    check(outcome, { 'an honest buyer gets a unit': (o) => o.kind === 'accepted' });
    return;
  }
  check(null, { 'an honest buyer gets a unit': () => false });
}

export const handleSummary = summaryHandler({
  name: 'bot-swarm',
  config,
  latencyBounds: LATENCY,
  timelineBucketSeconds: BUCKET_SECONDS,
  load: `${BOTS} bots as fast as they can for ${DURATION_S} s, ${HONEST} honest buyers at the opening`,
  details: (data) => [
    `${BOTS} bots for ${DURATION_S} s (+${START_DELAY} s before the opening); limits: ${PURCHASE_LIMIT} purchases / ` +
      `${PURCHASE_WINDOW_S} s and ${TOKEN_LIMIT} tokens / ${TOKEN_WINDOW_S} s per user`,
    `Bot purchases: admitted ${count(data, 'bot_purchases_admitted')} (at most ${MAX_BOT_PURCHASES}), ` +
      `refused at the door (429, or 503 shed) ${count(data, 'bot_purchases_rate_limited')}; tokens: admitted ${count(data, 'bot_tokens_admitted')} ` +
      `(at most ${MAX_BOT_TOKENS}), refused ${count(data, 'bot_tokens_rate_limited')}; ` +
      `answers outside docs/api.md ${count(data, 'bot_unexpected')}`,
    `Honest buyers: ${count(data, 'honest_accepted')} of ${HONEST} got a unit ` +
      `(${count(data, 'honest_rate_limited_waits')} waits on a 429)`,
    auditLine(data, false),
  ],
});
