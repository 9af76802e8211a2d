import type { OrderLifecycle } from '@flash-sale/stock';
import type { ClaimOutcome, OrderEntity, PaymentEntity, PaymentRepository, TransitionResult } from '@flash-sale/db';
import { DomainError, ErrorCode, type OrderStatus } from '@flash-sale/domain';
import { Logger } from '@nestjs/common';
import type { MetricsService } from '../metrics/metrics.service';
import type { OrdersService } from '../orders/orders.service';
import { PaymentsService } from './payments.service';
import type { SimulatedPaymentProvider } from './simulated-payment-provider';

const PAYMENT = { outTradeNo: 'PAY-1', orderNo: '1', amountCents: 500, transactionId: null } as PaymentEntity;

/**
 * A payment store in memory: what claiming the transaction answers, the transaction id the payment
 * holds afterwards, and which status the order has; it records every call the service makes.
 */
function paymentsWith(claim: ClaimOutcome, orderStatusAfter: OrderStatus, recordedTransaction = 'tx-1') {
  const calls: string[] = [];
  const repository = {
    inTransaction: <T>(work: (transaction: unknown) => Promise<T>) =>
      work({
        findByOutTradeNo: async (outTradeNo: string) =>
          outTradeNo === PAYMENT.outTradeNo ? { ...PAYMENT, transactionId: recordedTransaction } : null,
        claim: async (outTradeNo: string, transactionId: string) => {
          calls.push(`claim ${outTradeNo} ${transactionId}`);
          return claim;
        },
        markOrderPaid: async (orderNo: string): Promise<TransitionResult> => {
          calls.push(`paid ${orderNo}`);
          return {
            changed: orderStatusAfter === 'PAID',
            order: { status: orderStatusAfter, saleId: '7' } as OrderEntity,
          };
        },
        requireRefund: async (outTradeNo: string) => void calls.push(`refund ${outTradeNo}`),
      }),
  } as unknown as PaymentRepository;
  const metrics = { countPaidOrder: jest.fn() };
  const lifecycle = { orderPaid: async (saleId: string) => void calls.push(`mark sale ${saleId}`) };
  const service = new PaymentsService(
    repository,
    {} as OrdersService,
    {} as SimulatedPaymentProvider,
    metrics as unknown as MetricsService,
    lifecycle as unknown as OrderLifecycle,
  );
  return { service, calls, paidCounted: () => metrics.countPaidOrder.mock.calls.length };
}

const notification = { outTradeNo: 'PAY-1', transactionId: 'tx-1', amountCents: 500 };

describe('PaymentsService.applyNotification', () => {
  let errors: jest.SpyInstance;
  beforeEach(() => {
    errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it.each([
    {
      name: 'applies a first delivery, moves the order to PAID, counts it paid and marks its sale once committed',
      orderStatusAfter: 'PAID',
      outcome: 'applied',
      calls: ['claim PAY-1 tx-1', 'paid 1', 'mark sale 7'],
      paid: 1,
    },
    {
      name: 'marks the payment for refund when the order expired or was cancelled first',
      orderStatusAfter: 'EXPIRED',
      outcome: 'refund-required',
      calls: ['claim PAY-1 tx-1', 'paid 1', 'refund PAY-1'],
      paid: 0,
    },
  ] as const)('$name', async ({ orderStatusAfter, outcome, calls: expectedCalls, paid }) => {
    const { service, calls, paidCounted } = paymentsWith('claimed', orderStatusAfter);
    await expect(service.applyNotification(notification)).resolves.toBe(outcome);
    expect(calls).toEqual(expectedCalls);
    expect(paidCounted()).toBe(paid);
  });

  it('acknowledges a repeated delivery, or a transaction already used elsewhere, without applying or counting it', async () => {
    for (const claim of ['already-claimed', 'used-elsewhere'] as const) {
      const { service, calls, paidCounted } = paymentsWith(claim, 'PAID');
      await expect(service.applyNotification(notification)).resolves.toBe('duplicate');
      expect(calls).toEqual(['claim PAY-1 tx-1']); // the order is not touched
      expect(paidCounted()).toBe(0);
    }
    expect(errors).not.toHaveBeenCalled();
  });

  it('reports a second, different transaction for an already paid payment as one to refund', async () => {
    const { service, calls } = paymentsWith('already-claimed', 'PAID', 'tx-other');
    await expect(service.applyNotification(notification)).resolves.toBe('duplicate');
    expect(calls).toEqual(['claim PAY-1 tx-1']);
    expect(errors).toHaveBeenCalledWith('Second transaction tx-1 for PAY-1: refund it');
  });

  it('refuses an unknown payment (404) and a wrong amount (400) before claiming anything', async () => {
    const { service, calls } = paymentsWith('claimed', 'PAID');
    const code = (promise: Promise<unknown>) =>
      promise.then(
        () => 'applied',
        (error: unknown) => (error instanceof DomainError ? error.code : error),
      );
    expect(await code(service.applyNotification({ ...notification, outTradeNo: 'PAY-404' }))).toBe(ErrorCode.NotFound);
    expect(await code(service.applyNotification({ ...notification, amountCents: 1 }))).toBe(ErrorCode.ValidationFailed);
    expect(calls).toEqual([]);
  });
});
