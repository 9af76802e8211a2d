import { Agent, request } from 'undici';
import { inBatches } from '../support/api-client';
import { SERVED_BY_HEADER } from '../support/load-balancer';

/** Requests in flight at once through the load balancer. */
export const IN_FLIGHT = 150;
/** A buyer keeps sending the same token after a transient failure for this long before the test gives up. */
const RETRY_FOR_MS = 45_000;

export interface HttpAnswer {
  status: number;
  body: { orderNo?: string; token?: string; error?: { code: string } } | undefined;
  servedBy?: string;
  retryAfterSeconds: number;
}

/** A buyer's purchase that ended: accepted, or refused for good. */
export interface FinalAnswer {
  userId: string;
  token: string;
  status: number;
  code?: string;
  orderNo?: string;
}

export interface Burst {
  finals: FinalAnswer[];
  /** Answers that meant "outcome unknown, send it again" (connection lost, 429, 5xx), by route and kind. */
  transient: Map<string, number>;
  /** Which API answered how many purchases (the load balancer's header). */
  purchasesServedBy: Map<string, number>;
  /** Buyers still without a final answer when their retry budget ran out. */
  unresolved: string[];
  /** Accepted purchases answered after `markPhase` was called (e.g. after a failover). */
  acceptedAfterMark: number;
  /** 202s that answered a replay of the same token (its first send's outcome was unknown). */
  acceptedOnReplay: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const bump = (counts: Map<string, number>, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);

/**
 * A burst of real buyers through the load balancer: each signs in once (shared by all sales), then, per
 * sale, asks for a submit token and buys, some of them three or four times (fresh token each time) to
 * walk into the per-user limit. Whatever is not a final answer — a connection cut by a killed API, the
 * load balancer's 502/503 while no API is ready, a 503 + retry-after — is sent again with the SAME token,
 * as the contract asks, until it is answered for good.
 */
export class Buyers {
  readonly agent = new Agent({ connections: IN_FLIGHT + 20, pipelining: 1 });
  guests: { userId: string; token: string; attempts: number }[] = [];

  constructor(private readonly baseUrl: string) {}

  async send(
    method: 'GET' | 'POST',
    path: string,
    options: { token?: string; json?: unknown } = {},
  ): Promise<HttpAnswer | undefined> {
    const headers: Record<string, string> = {};
    if (options.token) headers['authorization'] = `Bearer ${options.token}`;
    if (options.json !== undefined) headers['content-type'] = 'application/json';
    try {
      const response = await request(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: options.json === undefined ? undefined : JSON.stringify(options.json),
        dispatcher: this.agent,
      });
      const text = await response.body.text();
      const json = String(response.headers['content-type'] ?? '').includes('json');
      return {
        status: response.statusCode,
        body: json && text ? (JSON.parse(text) as HttpAnswer['body']) : undefined,
        servedBy: response.headers[SERVED_BY_HEADER] as string | undefined,
        retryAfterSeconds: Number(response.headers['retry-after'] ?? 0),
      };
    } catch {
      return undefined; // the connection died: the request may or may not have been handled
    }
  }

  /**
   * Sends until the answer is final or time is up. As the storefront does, a lost connection, a 429 or
   * any 5xx is an unknown outcome: the same request (the same submit token) is sent again. `transient`
   * counts them by kind, under `label`.
   */
  async untilFinal(
    method: 'GET' | 'POST',
    path: string,
    options: { token?: string; json?: unknown },
    transient?: Map<string, number>,
    label = '',
  ): Promise<HttpAnswer | undefined> {
    const deadline = Date.now() + RETRY_FOR_MS;
    for (;;) {
      const answer = await this.send(method, path, options);
      const kind = !answer ? 'connection lost' : answer.status === 429 || answer.status >= 500 ? answer.status : null;
      if (kind === null) return answer;
      if (transient) bump(transient, `${label}${kind}`);
      if (Date.now() > deadline) return undefined;
      const retryAfterMs = Math.min((answer?.retryAfterSeconds ?? 0) * 1000, 1000);
      await sleep(retryAfterMs || 100 + Math.random() * 200);
    }
  }

  async signIn(count: number): Promise<void> {
    this.guests = await inBatches(
      Array.from({ length: count }, (_, i) => i),
      IN_FLIGHT,
      async (i) => {
        const answer = await this.untilFinal('POST', '/api/auth/guest', { json: {} });
        if (answer?.status !== 201) throw new Error(`guest sign-in: ${answer?.status}`);
        const session = answer.body as unknown as { token: string; user: { id: string } };
        // One buyer in ten tries four times, one in ten three times: beyond the limit of two.
        const attempts = i % 10 === 0 ? 4 : i % 10 === 5 ? 3 : 1;
        return { userId: session.user.id, token: session.token, attempts };
      },
    );
  }

  /**
   * Starts the burst on one sale; `onAccepted` sees the count of 202s so far (a test kills something at a
   * threshold), `markPhase` starts counting the 202s answered after it.
   */
  burst(saleId: string, onAccepted: (acceptedSoFar: number) => void): { finished: Promise<Burst>; markPhase(): void } {
    const result: Burst = {
      finals: [],
      transient: new Map(),
      purchasesServedBy: new Map(),
      unresolved: [],
      acceptedAfterMark: 0,
      acceptedOnReplay: 0,
    };
    let marked = false;
    let accepted = 0;
    const finished = inBatches(this.guests, IN_FLIGHT, async (guest) => {
      for (let attempt = 0; attempt < guest.attempts; attempt++) {
        const issued = await this.untilFinal(
          'POST',
          `/api/sales/${saleId}/tokens`,
          { token: guest.token },
          result.transient,
          'token ',
        );
        if (issued?.status !== 201) {
          result.unresolved.push(`${guest.userId}: token ${issued?.status ?? 'no answer'}`);
          return;
        }
        const submitToken = issued.body!.token!;
        const replays = new Map<string, number>();
        const answer = await this.untilFinal(
          'POST',
          `/api/sales/${saleId}/purchase`,
          { token: guest.token, json: { token: submitToken } },
          replays,
          'purchase ',
        );
        for (const [kind, n] of replays) result.transient.set(kind, (result.transient.get(kind) ?? 0) + n);
        if (!answer) {
          result.unresolved.push(`${guest.userId}: purchase unanswered`);
          return;
        }
        if (answer.servedBy) bump(result.purchasesServedBy, answer.servedBy);
        result.finals.push({
          userId: guest.userId,
          token: submitToken,
          status: answer.status,
          code: answer.body?.error?.code,
          orderNo: answer.body?.orderNo,
        });
        if (answer.status === 202) {
          accepted += 1;
          if (replays.size > 0) result.acceptedOnReplay += 1;
          if (marked) result.acceptedAfterMark += 1;
          onAccepted(accepted);
        }
        // A buyer told the sale is over stops trying.
        if (answer.status === 410) return;
      }
    }).then(() => result);
    return { finished, markPhase: () => (marked = true) };
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
