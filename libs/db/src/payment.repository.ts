import type { DataSource, EntityManager } from 'typeorm';
import { isDuplicateKeyError } from './mysql-errors';
import type { OrderEntity } from './entities/order.entity';
import { PaymentEntity } from './entities/payment.entity';
import type { OrderTransitionRepository, TransitionResult } from './order-transition.repository';

/**
 * How claiming a provider transaction for a payment went: `claimed` (this delivery applies it),
 * `already-claimed` (the payment has a transaction: this one or a second one), `used-elsewhere` (the
 * transaction id already paid another payment).
 */
export type ClaimOutcome = 'claimed' | 'already-claimed' | 'used-elsewhere';

/** One notification's work, all in one MySQL transaction. */
export class PaymentTransaction {
  constructor(
    private readonly manager: EntityManager,
    private readonly transitions: OrderTransitionRepository,
  ) {}

  findByOutTradeNo(outTradeNo: string): Promise<PaymentEntity | null> {
    return this.manager.getRepository(PaymentEntity).findOneBy({ outTradeNo });
  }

  /** Writes the transaction id once: only onto a payment that has none (unique, so only once overall). */
  async claim(outTradeNo: string, transactionId: string, paidAt: Date): Promise<ClaimOutcome> {
    try {
      const result = (await this.manager.query(
        `UPDATE payments SET transaction_id = ?, status = 'SUCCEEDED', paid_at = ?
          WHERE out_trade_no = ? AND transaction_id IS NULL`,
        [transactionId, paidAt, outTradeNo],
      )) as { affectedRows: number };
      return result.affectedRows > 0 ? 'claimed' : 'already-claimed';
    } catch (error) {
      if (isDuplicateKeyError(error)) return 'used-elsewhere';
      throw error;
    }
  }

  /**
   * The order's PENDING_PAYMENT → PAID, by compare-and-set, in this transaction. Once it commits, the
   * caller marks the sale for reconciliation (OrderLifecycle.orderPaid).
   */
  markOrderPaid(orderNo: string, paidAt: Date): Promise<TransitionResult> {
    return this.transitions.markPaid(this.manager, orderNo, paidAt);
  }

  async requireRefund(outTradeNo: string): Promise<void> {
    await this.manager.query(`UPDATE payments SET status = 'REFUND_REQUIRED' WHERE out_trade_no = ?`, [outTradeNo]);
  }
}

/** Payments: one per order (unique order_no), each applied once (unique transaction id). */
export class PaymentRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly transitions: OrderTransitionRepository,
  ) {}

  /** The order's one payment, created on first use (a repeated pay reuses it). */
  async ensureFor(order: Pick<OrderEntity, 'orderNo' | 'amountCents'>): Promise<PaymentEntity> {
    const payments = this.dataSource.getRepository(PaymentEntity);
    try {
      await payments.insert({
        orderNo: order.orderNo,
        outTradeNo: `PAY-${order.orderNo}`,
        amountCents: order.amountCents,
        status: 'PENDING',
        transactionId: null,
        paidAt: null,
      });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
    return payments.findOneByOrFail({ orderNo: order.orderNo });
  }

  /** Runs `work` in one READ COMMITTED transaction. */
  inTransaction<T>(work: (payment: PaymentTransaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction('READ COMMITTED', (manager) =>
      work(new PaymentTransaction(manager, this.transitions)),
    );
  }
}
