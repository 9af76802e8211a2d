import { isDuplicateKeyError, OrderEntity, OrderLifecycle, PaymentEntity } from '@flash-sale/db';
import { DomainError, ErrorCode } from '@flash-sale/domain';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { AuthUser } from '../auth/auth-user';
import { OrdersService } from '../orders/orders.service';
import type { OrderView } from '../orders/order.view';
import type { PaymentCallbackDto } from './payment.dto';
import { SimulatedPaymentProvider } from './simulated-payment-provider';

export type CallbackOutcome = 'applied' | 'duplicate' | 'refund-required';

/**
 * Payment of an order (DESIGN.md step 6). One payment per order (unique order_no) with its own
 * out-trade number; a provider notification is applied once, keyed by its transaction id (unique),
 * and moves the order to PAID by compare-and-set, so a payment racing an expiry has one winner.
 */
@Injectable()
export class PaymentsService {
  private readonly logger = new Logger(PaymentsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly lifecycle: OrderLifecycle,
    private readonly orders: OrdersService,
    private readonly provider: SimulatedPaymentProvider,
  ) {}

  /** Pays the caller's order; repeating it is harmless (PAID stays PAID, the same payment is reused). */
  async pay(caller: AuthUser, orderNo: string): Promise<OrderView> {
    const order = await this.orders.ownWrittenOrder(caller, orderNo);
    if (order.status === 'PAID') return this.orders.get(caller, orderNo);
    if (order.status !== 'PENDING_PAYMENT') {
      throw new DomainError(ErrorCode.InvalidTransition, `Order ${orderNo} is ${order.status} and cannot be paid`);
    }
    const payment = await this.paymentFor(order);
    const { transactionId } = this.provider.charge(payment);
    // The provider answered synchronously: apply it through the same idempotent path as its callbacks.
    const outcome = await this.applyNotification({
      outTradeNo: payment.outTradeNo,
      transactionId,
      amountCents: payment.amountCents,
    });
    const paid = await this.orders.get(caller, orderNo);
    if (paid.status !== 'PAID') {
      throw new DomainError(
        ErrorCode.InvalidTransition,
        `Order ${orderNo} became ${paid.status} before the payment completed${outcome === 'refund-required' ? '; the payment will be refunded' : ''}`,
      );
    }
    return paid;
  }

  /**
   * A provider notification. The transaction id is written once (unique, and only onto a payment that
   * has none), so a second delivery changes nothing; the order moves to PAID in the same transaction.
   */
  async applyNotification(
    notification: Pick<PaymentCallbackDto, 'outTradeNo' | 'transactionId' | 'amountCents'>,
  ): Promise<CallbackOutcome> {
    return this.dataSource.transaction('READ COMMITTED', async (manager) => {
      const payments = manager.getRepository(PaymentEntity);
      const payment = await payments.findOneBy({ outTradeNo: notification.outTradeNo });
      if (!payment) throw new DomainError(ErrorCode.NotFound, `No payment ${notification.outTradeNo}`);
      if (payment.amountCents !== notification.amountCents) {
        throw new DomainError(
          ErrorCode.ValidationFailed,
          `Amount ${notification.amountCents} does not match the payment`,
        );
      }
      let claimed: { affectedRows: number };
      try {
        claimed = (await manager.query(
          `UPDATE payments SET transaction_id = ?, status = 'SUCCEEDED', paid_at = ?
            WHERE out_trade_no = ? AND transaction_id IS NULL`,
          [notification.transactionId, new Date(), notification.outTradeNo],
        )) as { affectedRows: number };
      } catch (error) {
        if (isDuplicateKeyError(error)) return 'duplicate'; // this transaction id already paid another payment
        throw error;
      }
      if (claimed.affectedRows === 0) {
        const recorded = await payments.findOneBy({ outTradeNo: notification.outTradeNo });
        if (recorded?.transactionId !== notification.transactionId) {
          this.logger.error(
            `Second transaction ${notification.transactionId} for ${notification.outTradeNo}: refund it`,
          );
        }
        return 'duplicate';
      }
      const result = await this.lifecycle.markPaid(manager, payment.orderNo, new Date());
      if (result.changed || result.order?.status === 'PAID') return 'applied';
      // The order expired or was cancelled first: the money moved for nothing and must go back.
      await manager.query(`UPDATE payments SET status = 'REFUND_REQUIRED' WHERE out_trade_no = ?`, [
        notification.outTradeNo,
      ]);
      this.logger.warn(
        `Payment ${notification.outTradeNo} arrived after order ${payment.orderNo} became ${result.order?.status}`,
      );
      return 'refund-required';
    });
  }

  private async paymentFor(order: OrderEntity): Promise<PaymentEntity> {
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
      if (!isDuplicateKeyError(error)) throw error; // a repeated pay reuses the order's one payment
    }
    return payments.findOneByOrFail({ orderNo: order.orderNo });
  }
}
