import { LOCK_HOLDER_PAUSE_ARMED_SECONDS, LOCK_STRATEGIES, type LockHolderPauseArmed } from '@flash-sale/contract';
import { DomainError, ErrorCode } from '@flash-sale/domain';
import { Controller, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { AdminOnly } from '../auth/auth.guard';
import { StockStrategies } from '../purchase/strategies/stock-strategies';
import { SaleCatalog } from '../sales/sale-catalog';

/**
 * The demonstration's paused lock holder, armed on its own for one test sale: what lets a load test
 * (k6's strategy comparison) show redis-lock-unfenced overselling and redis-lock refusing the late
 * write, as the demonstration's `pauseLockHolder` does. The sale's next lock grant pauses, on whichever
 * API instance it happens. Never for a shop sale: a shopper's purchase is never paused.
 */
@Controller('admin/sales')
@AdminOnly()
export class LockHolderPauseController {
  constructor(
    private readonly catalog: SaleCatalog,
    private readonly strategies: StockStrategies,
  ) {}

  @Post(':id/pause-lock-holder')
  @HttpCode(HttpStatus.OK)
  async arm(@Param('id') saleId: string): Promise<LockHolderPauseArmed> {
    const sale = await this.catalog.get(saleId);
    const pauses = this.strategies.of(sale.strategy).lockHolderPauses;
    if (!pauses) {
      throw new DomainError(
        ErrorCode.ValidationFailed,
        `Only a ${LOCK_STRATEGIES.join(' or ')} sale has a lock holder to pause; sale ${saleId} is ${sale.strategy}`,
      );
    }
    if (sale.purpose === 'shop') {
      throw new DomainError(
        ErrorCode.ValidationFailed,
        `Sale ${saleId} is a shop sale: the pause is for test data only (purpose load-test, bench or demo)`,
      );
    }
    const armedForMs = LOCK_HOLDER_PAUSE_ARMED_SECONDS * 1000;
    await pauses.arm(sale.id, armedForMs);
    return { saleId: sale.id, armedUntil: new Date(Date.now() + armedForMs).toISOString() };
  }
}
