import type { ClaimOutcome, OrderEntity, PaymentEntity, PaymentRepository, TransitionResult } from '@flash-sale/db';
import { DomainError, ErrorCode, type OrderStatus } from '@flash-sale/domain';
import type { OrdersService } from '../orders/orders.service';
import { PaymentsService } from './payments.service';
import type { SimulatedPaymentProvider } from './simulated-payment-provider';

const PAYMENT = { outTradeNo: 'PAY-1', orderNo: '1', amountCents: 500, transactionId: null } as PaymentEntity;

/** A payment store in memory: what the notification claims, and which order status it finds. */
function paymentsWith(claim: ClaimOutcome, orderStatusAfter: OrderStatus, recordedTransaction = 'tx-1') {
  const refunds: string[] = [];
  const repository = {
    inTransaction: <T>(work: (transaction: unknown) => Promise<T>) =>
      work({
        findByOutTradeNo: async (outTradeNo: string) =>
          outTradeNo === PAYMENT.outTradeNo ? { ...PAYMENT, transactionId: recordedTransaction } : null,
        claim: async () => claim,
        markOrderPaid: async (): Promise<TransitionResult> => ({
          changed: orderStatusAfter === 'PAID',
          order: { status: orderStatusAfter } as OrderEntity,
        }),
        requireRefund: async (outTradeNo: string) => void refunds.push(outTradeNo),
      }),
  } as unknown as PaymentRepository;
  const service = new PaymentsService(repository, {} as OrdersService, {} as SimulatedPaymentProvider);
  return { service, refunds };
}

const notification = { outTradeNo: 'PAY-1', transactionId: 'tx-1', amountCents: 500 };

describe('PaymentsService.applyNotification', () => {
  it('applies a first delivery and moves the order to PAID', async () => {
    const { service, refunds } = paymentsWith('claimed', 'PAID');
    await expect(service.applyNotification(notification)).resolves.toBe('applied');
    expect(refunds).toEqual([]);
  });

  it('acknowledges a repeated delivery, or a transaction already used elsewhere, without applying it', async () => {
    await expect(paymentsWith('already-claimed', 'PAID').service.applyNotification(notification)).resolves.toBe(
      'duplicate',
    );
    await expect(paymentsWith('used-elsewhere', 'PAID').service.applyNotification(notification)).resolves.toBe(
      'duplicate',
    );
  });

  it('marks the payment for refund when the order expired or was cancelled first', async () => {
    const { service, refunds } = paymentsWith('claimed', 'EXPIRED');
    await expect(service.applyNotification(notification)).resolves.toBe('refund-required');
    expect(refunds).toEqual(['PAY-1']);
  });

  it('refuses an unknown payment (404) and a wrong amount (400) before claiming anything', async () => {
    const { service } = paymentsWith('claimed', 'PAID');
    const code = (promise: Promise<unknown>) =>
      promise.then(
        () => 'applied',
        (error: unknown) => (error instanceof DomainError ? error.code : error),
      );
    expect(await code(service.applyNotification({ ...notification, outTradeNo: 'PAY-404' }))).toBe(ErrorCode.NotFound);
    expect(await code(service.applyNotification({ ...notification, amountCents: 1 }))).toBe(ErrorCode.ValidationFailed);
  });
});
