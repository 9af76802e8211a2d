import type { SubmitToken, Ticket } from '@flash-sale/contract';
import type { ApiClient, ApiResponse } from '../support/api-client';

export interface Guest {
  token: string;
  userId: string;
}

/** One buyer's walk through a room, as a storefront makes it: join, poll at the advice, buy once admitted. */
export class RoomBuyer {
  /** Every ticket this buyer was answered, with when. */
  readonly tickets: { at: number; ticket: Ticket }[] = [];
  admittedAt?: number;
  boughtAt?: number;
  orderNo?: string;
  /** The last refusal of a token or a purchase, if any. */
  refusal?: string;

  constructor(
    private readonly client: ApiClient,
    readonly saleId: string,
    readonly guest: Guest,
  ) {}

  async join(): Promise<ApiResponse<Ticket>> {
    const answer = await this.client.call<Ticket>('POST', `/api/sales/${this.saleId}/queue`, {
      token: this.guest.token,
    });
    if (answer.status === 201) this.note(answer.body);
    return answer;
  }

  async poll(): Promise<ApiResponse<Ticket>> {
    const answer = await this.client.call<Ticket>('GET', `/api/sales/${this.saleId}/queue`, {
      token: this.guest.token,
    });
    if (answer.status === 200) this.note(answer.body);
    return answer;
  }

  get last(): Ticket | undefined {
    return this.tickets.at(-1)?.ticket;
  }

  /** Waits the advice of the last ticket, then polls (joining again after a 404, waiting out a 429). */
  async next(): Promise<Ticket> {
    await sleep(this.last?.pollAfterMs ?? 0);
    for (;;) {
      const answer = await this.poll();
      if (answer.status === 200) return answer.body;
      if (answer.status === 404) {
        const joined = await this.join();
        if (joined.status === 201) return joined.body;
      }
      if (answer.status === 429) {
        await sleep(Number(answer.headers['retry-after'] ?? 1) * 1000);
        continue;
      }
      throw new Error(`poll answered ${answer.status} ${JSON.stringify(answer.body)}`);
    }
  }

  /** Polls until the ticket is no longer `waiting`; buys when admitted (`buy` false: only waits). */
  async walk(options: { buy: boolean; until?: () => boolean }): Promise<Ticket> {
    let ticket = this.last ?? (await this.joinOrThrow());
    while (ticket.state === 'waiting' && !options.until?.()) ticket = await this.next();
    if (ticket.state === 'admitted' && options.buy) await this.buy(ticket.pass!);
    return ticket;
  }

  async buy(pass: string): Promise<void> {
    const token = await this.client.call<SubmitToken>('POST', `/api/sales/${this.saleId}/tokens`, {
      token: this.guest.token,
      json: { pass },
    });
    if (token.status !== 201) {
      this.refusal = errorCode(token);
      return;
    }
    const purchase = await this.client.call<{ orderNo: string }>('POST', `/api/sales/${this.saleId}/purchase`, {
      token: this.guest.token,
      json: { token: token.body.token },
    });
    if (purchase.status === 202 || purchase.status === 201) {
      this.boughtAt = Date.now();
      this.orderNo = purchase.body.orderNo;
    } else {
      this.refusal = errorCode(purchase);
    }
  }

  private async joinOrThrow(): Promise<Ticket> {
    const joined = await this.join();
    if (joined.status !== 201) throw new Error(`join answered ${joined.status} ${JSON.stringify(joined.body)}`);
    return joined.body;
  }

  private note(ticket: Ticket): void {
    const at = Date.now();
    this.tickets.push({ at, ticket });
    if (ticket.state === 'admitted' && this.admittedAt === undefined) this.admittedAt = at;
  }
}

export function errorCode(answer: ApiResponse<unknown>): string {
  return (answer.body as { error?: { code?: string } } | undefined)?.error?.code ?? String(answer.status);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Spearman's rank correlation of two orderings of the same items (1: same order, ~0: unrelated). */
export function rankCorrelation(first: readonly string[], second: readonly string[]): number {
  const rankInSecond = new Map(second.map((item, i) => [item, i]));
  const n = first.length;
  const squares = first.reduce((sum, item, i) => sum + (i - rankInSecond.get(item)!) ** 2, 0);
  return 1 - (6 * squares) / (n * (n * n - 1));
}
