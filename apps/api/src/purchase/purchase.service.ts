import type { AppConfig } from '@flash-sale/config';
import { DomainError, ErrorCode, OrderNumberGenerator } from '@flash-sale/domain';
import { ReservationScripts, SaleRedisRepository, type IssuedToken } from '@flash-sale/redis';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AuthUser } from '../auth/auth-user';
import { APP_CONFIG } from '../infra/tokens';
import { SaleCatalog } from '../sales/sale-catalog';
import { SalesService } from '../sales/sales.service';
import { OrderQueue } from './order-queue';

export interface PurchaseAccepted {
  orderNo: string;
  status: 'QUEUED';
}

/** A fresh order number collides (~2^-80) or a Redis reload races us: a couple of tries is plenty. */
const MAX_RESERVE_ATTEMPTS = 3;

/** The purchase path of DESIGN.md steps 2–4: submit token, one reservation script, enqueue. */
@Injectable()
export class PurchaseService {
  private readonly logger = new Logger(PurchaseService.name);
  private readonly orderNumbers = new OrderNumberGenerator();

  constructor(
    private readonly catalog: SaleCatalog,
    private readonly sales: SalesService,
    private readonly scripts: ReservationScripts,
    private readonly saleRedis: SaleRedisRepository,
    private readonly orderQueue: OrderQueue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async issueToken(user: AuthUser, saleId: string): Promise<IssuedToken> {
    const sale = await this.catalog.get(saleId);
    if (sale.endsAt <= new Date()) throw new DomainError(ErrorCode.SaleEnded, 'This sale has ended');
    return this.saleRedis.issueToken(sale.id, user.id, this.config.purchase.submitTokenTtlSeconds);
  }

  async purchase(user: AuthUser, saleId: string, token: string, quantity: number): Promise<PurchaseAccepted> {
    const sale = await this.catalog.get(saleId);
    for (let attempt = 1; attempt <= MAX_RESERVE_ATTEMPTS; attempt++) {
      const result = await this.scripts.reserve({
        saleId: sale.id,
        userId: user.id,
        token,
        quantity,
        orderNo: this.orderNumbers.next(sale.id),
      });
      switch (result.kind) {
        case 'reserved':
        case 'replayed':
          // A replay enqueues again on purpose: if the first enqueue was lost (it failed with a 503, or
          // the API died after the script), the buyer's retry with the same token repairs it; if not,
          // the job id makes the add a no-op.
          await this.orderQueue.enqueueCreateOrder({
            orderNo: result.orderNo,
            saleId: sale.id,
            userId: user.id,
            quantity: result.quantity,
            slot: result.slot,
            reservedAt: result.reservedAt.toISOString(),
          });
          return { orderNo: result.orderNo, status: 'QUEUED' };
        case 'order-number-taken':
          continue;
        case 'refused':
          if (result.saleNotLoaded && attempt < MAX_RESERVE_ATTEMPTS) {
            // Redis lost the sale (restart without persistence, flush): reload it from MySQL, which
            // never resells a held unit, and try again.
            this.logger.warn(`Sale ${sale.id} was not loaded in Redis; preloading it from MySQL`);
            await this.sales.preload(sale.id);
            continue;
          }
          throw new DomainError(result.code, REFUSAL_MESSAGES[result.code] ?? 'Purchase refused');
      }
    }
    throw new DomainError(ErrorCode.Unavailable, 'Could not reserve right now, please retry');
  }
}

const REFUSAL_MESSAGES: Partial<Record<ErrorCode, string>> = {
  [ErrorCode.SaleNotStarted]: 'This sale has not started yet',
  [ErrorCode.SaleEnded]: 'This sale has ended',
  [ErrorCode.TokenInvalid]: 'The submit token is unknown, expired, or not yours for this sale',
  [ErrorCode.LimitReached]: 'You already bought as many as this sale allows per person',
  [ErrorCode.SoldOut]: 'Sold out',
  [ErrorCode.Unavailable]: 'This sale is not loaded; an admin must preload it',
};
