import { PaymentRepository } from '@flash-sale/db';
import { OrderLifecycle } from '@flash-sale/stock';
import { DomainError, ErrorCode } from '@flash-sale/domain';
import { Injectable, Logger } from '@nestjs/common';
import type { AuthUser } from '../common/auth-user';
import { MetricsService } from '../metrics/metrics.service';
import { OrdersService } from '../orders/orders.service';
import type { OrderView } from '../orders/order.view';
import type { PaymentCallbackDto } from './payment.dto';
import { SimulatedPaymentProvider } from './simulated-payment-provider';

export type CallbackOutcome = 'applied' | 'duplicate' | 'refund-required';

/**
 * Payment of an order (docs/architecture.md "After the purchase"). One payment per order (unique order_no) with its own
 * out-trade number; a provider notification is applied once, keyed by its transaction id (unique),
 * and moves the order to PAID by compare-and-set, so a payment racing an expiry has one winner.
 */
@Injectable()
export class PaymentsService {
  private readonly logger = new Logger(PaymentsService.name);

  constructor(
    private readonly payments: PaymentRepository,
    private readonly orders: OrdersService,
    private readonly provider: SimulatedPaymentProvider,
    private readonly metrics: MetricsService,
    private readonly lifecycle: OrderLifecycle,
  ) {}

  /** Pays the caller's order; repeating it is harmless (PAID stays PAID, the same payment is reused). */
  async pay(caller: AuthUser, orderNo: string): Promise<OrderView> {
    const order = await this.orders.ownWrittenOrder(caller, orderNo);
    if (order.status === 'PAID') return this.orders.get(caller, orderNo);
    if (order.status !== 'PENDING_PAYMENT') {
      throw new DomainError(ErrorCode.InvalidTransition, `Order ${orderNo} is ${order.status} and cannot be paid`);
    }
    const payment = await this.payments.ensureFor(order);
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
    let movedToPaid = false;
    let saleId: string | undefined;
    const outcome = await this.payments.inTransaction(async (transaction): Promise<CallbackOutcome> => {
      movedToPaid = false;
      const { outTradeNo, transactionId } = notification;
      const payment = await transaction.findByOutTradeNo(outTradeNo);
      if (!payment) throw new DomainError(ErrorCode.NotFound, `No payment ${outTradeNo}`);
      if (payment.amountCents !== notification.amountCents) {
        throw new DomainError(
          ErrorCode.ValidationFailed,
          `Amount ${notification.amountCents} does not match the payment`,
        );
      }
      const claim = await transaction.claim(outTradeNo, transactionId, new Date());
      if (claim === 'used-elsewhere') return 'duplicate'; // this transaction id already paid another payment
      if (claim === 'already-claimed') {
        const recorded = await transaction.findByOutTradeNo(outTradeNo);
        if (recorded?.transactionId !== transactionId) {
          this.logger.error(`Second transaction ${transactionId} for ${outTradeNo}: refund it`);
        }
        return 'duplicate';
      }
      const result = await transaction.markOrderPaid(payment.orderNo, new Date());
      movedToPaid = result.changed;
      saleId = result.order?.saleId;
      if (result.changed || result.order?.status === 'PAID') return 'applied';
      // The order expired or was cancelled first: the money moved for nothing and must go back.
      await transaction.requireRefund(outTradeNo);
      this.logger.warn(`Payment ${outTradeNo} arrived after order ${payment.orderNo} became ${result.order?.status}`);
      return 'refund-required';
    });
    // Once committed, and only by the notification that moved the order: the funnel's "paid", and the
    // sale's mark for reconciliation.
    if (movedToPaid) {
      this.metrics.countPaidOrder();
      if (saleId) await this.lifecycle.orderPaid(saleId);
    }
    return outcome;
  }
}
