import type { SaleStrategy } from '@flash-sale/contract';
import { Agent, request } from 'undici';
import type { SystemUnderTest } from './system-under-test';
import { History, type Operation, type OperationKind, type Outcome, type RoomSettings } from './history';
import { admit, type HeldTicket, validPass } from './room-clients';
import { SEMI_SYNC_WAIT_MS } from '../../scripts/lib/mysql-machines.mjs';
import { ExplorerError } from './explorer-error';
import type { SaleWindowSampler } from './sale-window';

/** A client gives up on an answer after this long: the operation's outcome is then unknown. */
const CLIENT_TIMEOUT_MS = 4_000;

/** A replay resends one of this many latest purchases. */
const RECENT_PURCHASES = 4;

/** How long a buyer of a room sale waits in the room for a pass before buying without one. */
const ADMIT_WITHIN_MS = 5_000;

export interface SaleUnderTest {
  id: string;
  stock: number;
  perUserLimit: number;
  /** Redis buckets the sale is spread over (docs/architecture.md "Hot sales: buckets"). */
  buckets: number;
  strategy: SaleStrategy;
  /** The waiting room the sale was created with (`null`: none); admin actions may change it later. */
  room: RoomSettings | null;
  /** When the sale opened (its `startsAt`: its creation). */
  startsAt: number;
}

export interface Buyer {
  index: number;
  /** One of the crowd's buyers (test/chaos/crowd.ts): the schedule's `buyer#N` never picks them. */
  crowd?: boolean;
  userId: string;
  jwt: string;
  /** Tokens minted and not sent yet (a storefront fetches its token before the buyer clicks). */
  unsent: string[];
  /** The buyer's ticket in the sale's waiting room, as last answered (test/chaos/room-clients.ts). */
  ticket?: HeldTicket;
  /** A crowd attempt is taking this buyer's step in the room (room-clients.ts roomStep). */
  inRoom?: boolean;
}

export interface TokenUse {
  token: string;
  buyer: number;
  quantity: number;
}

export interface Answer {
  status?: number;
  body?: {
    orderNo?: string;
    status?: string;
    token?: string;
    error?: { code?: string };
    user?: { id: string };
    /** A ticket's (docs/api.md "The waiting room"). */
    state?: string;
    position?: number;
    pollAfterMs?: number;
    pass?: string;
    passExpiresAt?: string;
  };
  error?: string;
  /** Wall-clock instants the request was sent and answered (or failed). */
  sentAt: number;
  answeredAt: number;
}

/**
 * After a cut between the MySQL machines heals, how soon the replica has reconnected and acknowledged
 * what it missed, so that the commits its primary held are seen: a reconnect a second (MASTER_CONNECT_RETRY),
 * or TCP resending on its backoff over a connection the cut left open.
 */
const MYSQL_REPLICA_BACK_WITHIN_MS = 10_000;

/**
 * One run's clients: buyers of one fresh sale, and what each of them sent and was told (the history).
 * Clients behave like the storefront: they mint a token, buy with it, and resend the same token.
 */
export class RunWorld {
  readonly history = new History();
  /**
   * When Redis lost acknowledged data as a weaker persistence setting would (restarted empty, from an older
   * copy, a lagging replica promoted): the `202`s before such an instant that no worker had written may be
   * lost, as docs/failure-model.md allows for that setting.
   */
  readonly dataLosses: { kind: string; at: number }[] = [];
  /**
   * Spans in which the machines world's MySQL primary could not reach its replica and so held every
   * commit for it (semi-synchronous replication, docs/operations.md "MySQL on two machines"): a change
   * stamped by its statement inside one became visible only once the link was back.
   */
  readonly mysqlCommitHolds: { from: number; until?: number }[] = [];
  /** The promises the checker found lost that way (counted apart from the violations). */
  readonly lostAsDocumented: string[] = [];
  readonly buyers: Buyer[] = [];
  /** Guest sign-ins whose answer never came (each may have made a guest the run never learned of). */
  unansweredSignIns = 0;
  readonly tokens: TokenUse[] = [];
  /** The admin's token, for admin actions (test/chaos/admin-actions.ts). */
  adminJwt?: string;
  /** MySQL's end of the sale over time, for the answer rules (test/chaos/sale-window.ts). */
  window?: SaleWindowSampler;
  /**
   * The waiting room the clients believe the sale has: the creation's, then what the admin last set
   * (a `2xx`). Buyers go through it before they ask for a token; the rules judge what was really in force.
   */
  roomNow: RoomSettings | null;
  private readonly agent = new Agent({
    connections: 16,
    headersTimeout: CLIENT_TIMEOUT_MS,
    bodyTimeout: CLIENT_TIMEOUT_MS,
  });

  constructor(
    readonly cluster: SystemUnderTest,
    readonly sale: SaleUnderTest,
    /** A short description of the faults in force, stamped on each answer. */
    private readonly faultsActive: () => string,
  ) {
    this.roomNow = sale.room;
  }

  static async createSale(
    cluster: SystemUnderTest,
    adminJwt: string,
    shape: { stock: number; perUserLimit: number; buckets: number; strategy: SaleStrategy; room: RoomSettings | null },
  ): Promise<SaleUnderTest> {
    const world = new Agent({ connections: 1 });
    try {
      const response = await request(`${cluster.apiUrls[0]}/api/admin/sales`, {
        method: 'POST',
        dispatcher: world,
        headers: { authorization: `Bearer ${adminJwt}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          name: `chaos ${Date.now()}`,
          priceCents: 100,
          stock: shape.stock,
          perUserLimit: shape.perUserLimit,
          buckets: shape.buckets,
          endsAt: new Date(Date.now() + 3_600_000).toISOString(),
          strategy: shape.strategy,
          // The shortest allowed: unpaid orders expire within the run.
          paymentTimeoutSeconds: 10,
          waitingRoom: shape.room,
        }),
      });
      // Read as text: a balancer's own error page is HTML.
      const text = await response.body.text();
      if (response.statusCode !== 201) {
        throw new ExplorerError(`creating the run's sale answered ${response.statusCode}: ${text.slice(0, 300)}`);
      }
      const body = JSON.parse(text) as { id: string; startsAt: string };
      return { id: body.id, ...shape, startsAt: Date.parse(body.startsAt) };
    } finally {
      await world.close();
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** A guest buyer; `crowd`: one of the crowd's (test/chaos/crowd.ts). */
  async newBuyer(api: number, crowd = false): Promise<void> {
    const answer = await this.call(api, 'POST', '/api/auth/guest', undefined, {});
    // No answer: the guest may exist all the same, unknown to the run (mysql-rows.ts allows for it).
    if (answer.status === undefined || answer.status >= 500) this.unansweredSignIns += 1;
    if (answer.status !== 201 || !answer.body?.token || !answer.body.user) return; // MySQL paused: no buyer
    const buyer: Buyer = { index: this.buyers.length, userId: answer.body.user.id, jwt: answer.body.token, unsent: [] };
    this.buyers.push(crowd ? { ...buyer, crowd } : buyer);
  }

  /** The buyers the schedule's commands pick among (not the crowd's). */
  private get scheduleBuyers(): Buyer[] {
    return this.buyers.filter((buyer) => !buyer.crowd);
  }

  /** A token kept for later, with the pass the buyer holds in a room sale (none if they hold none). */
  async mint(buyerPick: number, api: number): Promise<void> {
    const buyer = this.pick(this.scheduleBuyers, buyerPick);
    const token = buyer && (await this.mintFor(buyer, api));
    if (token) buyer.unsent.push(token);
  }

  /** The schedule's buyer `buyerPick` (not the crowd's). */
  scheduleBuyer(buyerPick: number): Buyer | undefined {
    return this.pick(this.scheduleBuyers, buyerPick);
  }

  /**
   * A token for a purchase now, as the storefront gets one: in a room sale the buyer goes through the
   * room first (joins, polls as advised) unless they hold an unexpired pass.
   */
  async tokenFor(buyer: Buyer, api: number): Promise<string | undefined> {
    if (this.roomNow && !validPass(buyer)) await admit(this, buyer, api, ADMIT_WITHIN_MS);
    return this.mintFor(buyer, api);
  }

  /**
   * Buys with the buyer's oldest unsent token (minted now if there is none). `dropReply`: the proxy
   * loses Redis' reply to the purchase's first command carrying the token (and calls its `onDrop`);
   * true if it did.
   */
  async buy(buyerPick: number, quantity: number, api: number, dropReply?: { onDrop?: () => void }): Promise<boolean> {
    const buyer = this.pick(this.scheduleBuyers, buyerPick);
    if (!buyer) return false;
    const token = buyer.unsent.shift() ?? (await this.tokenFor(buyer, api));
    if (!token) return false;
    const use = { token, buyer: buyer.index, quantity };
    this.tokens.push(use);
    const { proxy } = this.cluster;
    if (dropReply && !proxy) throw new ExplorerError('this world has no Redis link that can lose a reply');
    const dropped =
      dropReply && proxy ? proxy.dropReplyTo(token, CLIENT_TIMEOUT_MS, dropReply.onDrop) : Promise.resolve(false);
    await this.purchase('buy', use, api);
    proxy?.cancelDrop();
    return dropped;
  }

  /**
   * The same token again, as a client does after a 503, a lost answer, or a reload: one of the last
   * few purchases (clients retry what they just sent, not what they bought long ago).
   */
  async replay(tokenPick: number, api: number): Promise<void> {
    const use = this.pick(this.tokens.slice(-RECENT_PURCHASES), tokenPick);
    if (use) await this.purchase('replay', use, api);
  }

  /** The final read: a token sent again once everything is back up. */
  async settle(use: TokenUse, api: number): Promise<void> {
    await this.purchase('settle', use, api);
  }

  async pay(orderPick: number, api: number): Promise<void> {
    await this.changeOrder('pay', orderPick, api);
  }

  async cancel(orderPick: number, api: number): Promise<void> {
    await this.changeOrder('cancel', orderPick, api);
  }

  /** Tokens whose every answer so far was unknown: the final read resends each once. */
  unsettledTokens(): TokenUse[] {
    return this.tokens.filter((use) => {
      const answers = this.history.ofToken(use.token);
      return answers.every((operation) => operation.outcome === 'info');
    });
  }

  /** Redis is about to lose acknowledged data (`kind`: the fault that emulates the setting). */
  noteDataLoss(kind: string): void {
    this.dataLosses.push({ kind, at: Date.now() });
  }

  /** The data loss after `instant`, if any. */
  dataLossAfter(instant: number): { kind: string; at: number } | undefined {
    return this.dataLosses.find((loss) => loss.at > instant);
  }

  /** From now, MySQL's primary may hold its commits: its semi-synchronous replica is cut off from it. */
  holdMysqlCommits(): void {
    if (this.mysqlCommitHolds.at(-1)?.until === undefined && this.mysqlCommitHolds.length > 0) return;
    this.mysqlCommitHolds.push({ from: Date.now() });
  }

  /** The link between the MySQL machines is back (a heal, the run's settling). */
  releaseMysqlCommits(): void {
    const open = this.mysqlCommitHolds.at(-1);
    if (open && open.until === undefined) open.until = Date.now();
  }

  /**
   * The first instant a reader may have seen a MySQL change whose statement ran (and stamped the row) at
   * `stampedAt`: at once, or, if its commit was held for the replica, once the link was back and the
   * replica had caught up with what it missed (MYSQL_REPLICA_BACK_WITHIN_MS) — or once the primary gave up
   * waiting for it (SEMI_SYNC_WAIT_MS after its first held commit, which came no later than this one's; a
   * second more for the release to reach the reader).
   */
  mysqlChangeVisibleFrom(stampedAt: number): number {
    const hold = this.mysqlCommitHolds.find(
      ({ from, until }) => from <= stampedAt && (until === undefined || stampedAt < until),
    );
    if (!hold) return stampedAt;
    const linkBack = hold.until === undefined ? Infinity : hold.until + MYSQL_REPLICA_BACK_WITHIN_MS;
    return Math.min(linkBack, stampedAt + SEMI_SYNC_WAIT_MS + 1_000);
  }

  /** Order numbers some client was promised (2xx), with their buyer. */
  promisedOrders(): { orderNo: string; buyer: number }[] {
    const seen = new Map<string, number>();
    for (const operation of this.history.operations) {
      if (operation.outcome === 'ok' && operation.orderNo && !seen.has(operation.orderNo)) {
        seen.set(operation.orderNo, operation.buyer);
      }
    }
    return [...seen].map(([orderNo, buyer]) => ({ orderNo, buyer }));
  }

  private async changeOrder(kind: 'pay' | 'cancel', orderPick: number, api: number): Promise<void> {
    const order = this.pick(this.promisedOrders(), orderPick);
    if (!order) return;
    const buyer = this.buyers[order.buyer]!;
    const answer = await this.call(api, 'POST', `/api/orders/${order.orderNo}/${kind}`, buyer.jwt);
    this.record(kind, api, buyer.index, order.orderNo, undefined, answer);
  }

  /**
   * `POST /tokens`, recorded: with the pass the buyer holds (whether it expired or not: a late pass
   * must be refused), none if they hold none, or `pass` when given (`null`: none).
   */
  async mintFor(buyer: Buyer, api: number, pass?: HeldTicket['pass'] | null): Promise<string | undefined> {
    const sent = pass === undefined ? buyer.ticket?.pass : (pass ?? undefined);
    const answer = await this.call(
      api,
      'POST',
      `/api/sales/${this.sale.id}/tokens`,
      buyer.jwt,
      sent ? { pass: sent.pass } : undefined,
    );
    this.record('mint', api, buyer.index, answer.body?.token ?? 'token', undefined, answer, buyer.crowd, {
      pass: sent ? { expiresAt: sent.expiresAt } : 'none',
    });
    return answer.status === 201 ? answer.body?.token : undefined;
  }

  /** One purchase request with `use`'s token, recorded (`crowd`: sent by the crowd). */
  async purchase(kind: OperationKind, use: TokenUse, api: number, crowd = false): Promise<Operation> {
    const buyer = this.buyers[use.buyer]!;
    const answer = await this.call(api, 'POST', `/api/sales/${this.sale.id}/purchase`, buyer.jwt, {
      token: use.token,
      quantity: use.quantity,
    });
    return this.record(kind, api, buyer.index, use.token, use.quantity, answer, crowd);
  }

  record(
    kind: OperationKind,
    api: number,
    buyer: number,
    subject: string,
    quantity: number | undefined,
    answer: Answer,
    crowd = false,
    extra: Partial<Pick<Operation, 'ticket' | 'pass' | 'room'>> = {},
  ): Operation {
    const outcome: Outcome =
      answer.status === undefined || answer.status >= 500 ? 'info' : answer.status < 300 ? 'ok' : 'fail';
    const purchase = kind === 'buy' || kind === 'replay' || kind === 'settle';
    const skewMs = this.cluster.clockOffsetMs(api);
    return this.history.record({
      kind,
      api,
      buyer,
      subject,
      quantity,
      outcome,
      status: answer.status,
      code: answer.body?.error?.code,
      orderNo: outcome === 'ok' && purchase ? answer.body?.orderNo : undefined,
      ...(outcome === 'ok' && purchase
        ? { orderStatus: answer.body?.status ?? (answer.status === 202 ? 'QUEUED' : undefined) }
        : {}),
      error: answer.error,
      faultsActive: this.faultsActive(),
      sentAt: answer.sentAt,
      answeredAt: answer.answeredAt,
      ...(crowd ? { crowd } : {}),
      ...(skewMs ? { skewMs } : {}),
      ...extra,
    });
  }

  async call(
    api: number,
    method: 'POST' | 'GET' | 'PATCH',
    path: string,
    jwt?: string,
    json?: unknown,
  ): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (jwt) headers['authorization'] = `Bearer ${jwt}`;
    if (json !== undefined) headers['content-type'] = 'application/json';
    const sentAt = Date.now();
    try {
      const response = await request(`${this.cluster.apiUrls[api]}${path}`, {
        method,
        headers,
        body: json === undefined ? undefined : JSON.stringify(json),
        dispatcher: this.agent,
      });
      const text = await response.body.text();
      let body: Answer['body'];
      try {
        body = text ? (JSON.parse(text) as Answer['body']) : undefined;
      } catch {
        body = undefined;
      }
      return { status: response.statusCode, body, sentAt, answeredAt: Date.now() };
    } catch (error) {
      return {
        error: error instanceof Error ? ((error as { code?: string }).code ?? error.message) : String(error),
        sentAt,
        answeredAt: Date.now(),
      };
    }
  }

  private pick<T>(items: readonly T[], pick: number): T | undefined {
    return items.length === 0 ? undefined : items[pick % items.length];
  }
}
