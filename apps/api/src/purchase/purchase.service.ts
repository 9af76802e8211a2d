import { DomainError, ErrorCode, type SaleDefinition } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../common/auth-user';
import { PurchaseRateLimits } from '../protection/purchase-rate-limits';
import { SaleCatalog } from '../sales/sale-catalog';
import { WaitingRoom } from '../waiting-room/waiting-room.service';
import type { PurchaseOrder } from './purchase-body';
import type { PurchaseAccepted } from './stock-strategy';
import { StockStrategies } from './strategies/stock-strategies';
import { type IssuedSubmitToken, SubmitTokens } from './submit-tokens';

/**
 * Submit tokens and purchases, each sent to the sale's strategy (docs/architecture.md, "Strategies"),
 * with what every strategy shares around it: the sale's window for tokens, the waiting room's turn, and
 * the rate limits — spent here, and only here, for every purchase whose strategy does not count them
 * itself (PurchaseRateLimits says when each purchase spends them).
 */
@Injectable()
export class PurchaseService {
  constructor(
    private readonly catalog: SaleCatalog,
    private readonly tokens: SubmitTokens,
    private readonly rateLimits: PurchaseRateLimits,
    private readonly strategies: StockStrategies,
    private readonly room: WaitingRoom,
  ) {}

  /** `pass`: a sale with a waiting room issues tokens only to the buyers it admitted. */
  async issueToken(user: AuthUser, saleId: string, pass?: string): Promise<IssuedSubmitToken> {
    const sale = await this.catalog.get(saleId);
    if (sale.endsAt <= new Date()) throw new DomainError(ErrorCode.SaleEnded, 'This sale has ended');
    this.room.requireAdmission(sale, user.id, pass);
    const issued = this.tokens.sign(sale.id, user.id);
    await this.strategies.of(sale.strategy).tokenIssued?.(sale, user.id, issued.token, this.tokens.ttlSeconds);
    return issued;
  }

  /** A verified caller's purchase, its body valid; every refusal is thrown. */
  async purchase(userId: string, saleId: string, order: PurchaseOrder): Promise<PurchaseAccepted> {
    // A live sale is in the catalog's memory: no promise to wait for.
    const sale = this.catalog.peek(saleId) ?? (await this.saleOf(saleId, userId));
    if (!sale.waitingRoom) return this.sell(sale, userId, order);
    try {
      const accepted = await this.sell(sale, userId, order);
      // A replay sold nothing now: the room counted its units when the token first bought.
      if (!accepted.replay) this.room.buyerDone(sale, userId, order.quantity);
      return accepted;
    } catch (error) {
      if (endsTurn(error)) this.room.buyerDone(sale, userId, 0);
      throw error;
    }
  }

  /** Not `async`: a strategy that counts the rate limits itself (redis-lua's script) is called straight away. */
  private sell(sale: SaleDefinition, userId: string, order: PurchaseOrder): Promise<PurchaseAccepted> {
    const strategy = this.strategies.of(sale.strategy);
    if (strategy.countsRateLimits?.()) return strategy.sell(sale, userId, order);
    return this.rateLimits.spendNow(sale, userId).then(() => strategy.sell(sale, userId, order));
  }

  /**
   * A body that is not a purchase: 400 — after the rate limits, which come first (docs/api.md's order).
   * Counted in the buyer's bucket when the sale is known here already (a sale over buckets).
   */
  async refuseBody(userId: string, saleId: string, error: unknown): Promise<never> {
    await this.rateLimits.spendNow(this.catalog.peek(saleId) ?? saleId, userId);
    throw error;
  }

  /** The sale, or 404 — after the rate limits, which come first (docs/api.md's order). */
  private async saleOf(saleId: string, userId: string): Promise<SaleDefinition> {
    try {
      return await this.catalog.get(saleId);
    } catch (error) {
      await this.rateLimits.spendNow(saleId, userId);
      throw error;
    }
  }
}

/** A refusal after which the buyer cannot buy in this sale with another try: their turn in its room is over. */
function endsTurn(error: unknown): boolean {
  return (
    error instanceof DomainError &&
    (error.code === ErrorCode.LimitReached || error.code === ErrorCode.SoldOut || error.code === ErrorCode.SaleEnded)
  );
}
