import { WarmUpSaleRepository } from '@flash-sale/db';
import { errorMessage, type SaleLayout } from '@flash-sale/domain';
import { OrdersQueue } from '@flash-sale/queue';
import { DriftBoard, SaleActivity, SaleState } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';
import { SaleCatalog } from '../sales/sale-catalog';

/**
 * Removes the startup warm-up's sales (ops/startup-warm-up.ts): a real sale, created and bought in
 * through the public routes like any other, then taken out of everything it touched — its rows in
 * MySQL, its keys in Redis, its `write-orders` jobs and its mark among the active sales — so that
 * nothing of it is left for a user, an operator or the audit to find.
 */
@Injectable()
export class WarmUpSales {
  private readonly logger = new Logger(WarmUpSales.name);

  constructor(
    private readonly repository: WarmUpSaleRepository,
    private readonly saleState: SaleState,
    private readonly activity: SaleActivity,
    private readonly drifts: DriftBoard,
    private readonly orders: OrdersQueue,
    private readonly catalog: SaleCatalog,
  ) {}

  /**
   * The sale and all it made. MySQL first: a worker or a periodic job that looks at the sale from then on
   * finds it gone, and loads nothing back into Redis; one that read it just before (a worker writing a
   * batch) commits before the removal's lock is granted. Redis after: its hand-off streams go with it,
   * with any order no worker had taken yet, and the submit tokens it issued (`tokens`, or, for a sale a
   * dead process left, every token of the sale, looked for). False when some of it could not be removed
   * (said in a log line; the next warm-up removes the rest once the sale has ended).
   */
  async remove(sale: SaleLayout, tokens?: readonly { userId: string; token: string }[]): Promise<boolean> {
    try {
      await this.activity.forget(sale.id);
      await this.repository.remove(sale.id);
      await this.saleState.reset(sale);
      await (tokens ? this.saleState.forgetTokens(sale, tokens) : this.saleState.forgetEveryToken(sale));
      await this.drifts.forget(sale.id);
      await this.orders.forgetSale(sale.id);
      return true;
    } catch (error) {
      this.logger.warn(`Warm-up sale ${sale.id} not wholly removed: ${errorMessage(error)}`);
      return false;
    } finally {
      this.catalog.forget(sale.id);
    }
  }

  /**
   * What a process that died during its warm-up left: its sale, once ended (a warm-up never outlives its
   * sale's window, so an ended one is no process's current warm-up).
   */
  async removeLeftovers(now = new Date()): Promise<void> {
    let leftovers: SaleLayout[];
    try {
      leftovers = await this.repository.endedBefore(now);
    } catch (error) {
      this.logger.warn(`Earlier warm-ups' sales not looked for: ${errorMessage(error)}`);
      return;
    }
    for (const sale of leftovers) await this.remove(sale);
  }
}
