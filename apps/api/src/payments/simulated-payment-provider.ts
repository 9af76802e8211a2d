import { errorMessage } from '@flash-sale/domain';
import { createHash } from 'node:crypto';
import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { type BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { MetricsService } from '../metrics/metrics.service';
import { PAYMENT_SIGNATURE_HEADER, signPaymentBody } from './payment-signature';
import type { PaymentCallbackDto } from './payment.dto';

/**
 * A stand-in for a payment provider. `charge` answers at once (like a card API) with a transaction id
 * that is the same for the same out-trade number — providers deduplicate on it — and then the provider
 * calls back, as real ones do: late, `callbackCopies` times, each copy with its own random delay, so
 * copies of different payments arrive out of order. The callbacks are HMAC-signed.
 */
@Injectable()
export class SimulatedPaymentProvider implements BeforeApplicationShutdown {
  private readonly logger = new Logger(SimulatedPaymentProvider.name);
  private readonly pending = new Set<NodeJS.Timeout>();
  private readonly delivering = new Set<Promise<void>>();

  constructor(
    @InjectAppConfig() private readonly config: AppConfig,
    private readonly httpHost: HttpAdapterHost,
    private readonly metrics: MetricsService,
  ) {}

  charge(payment: { outTradeNo: string; amountCents: number }): { transactionId: string } {
    const transactionId = `txn_${createHash('sha256').update(`sim:${payment.outTradeNo}`).digest('hex').slice(0, 32)}`;
    // Exactly the DTO's fields: the caller's payment entity has more, which the callback route refuses.
    const callback: PaymentCallbackDto = {
      outTradeNo: payment.outTradeNo,
      transactionId,
      amountCents: payment.amountCents,
      status: 'SUCCESS',
    };
    const { callbackCopies, callbackDelayMs, callbackJitterMs } = this.config.payment;
    for (let copy = 0; copy < callbackCopies; copy++) {
      const timer = setTimeout(
        () => {
          this.pending.delete(timer);
          const delivery = this.deliver(callback).finally(() => this.delivering.delete(delivery));
          this.delivering.add(delivery);
        },
        callbackDelayMs + Math.random() * callbackJitterMs,
      );
      this.pending.add(timer);
    }
    return { transactionId };
  }

  /**
   * Before the HTTP server closes: callbacks not sent yet are dropped, those on their way are let
   * finish. A callback still in flight when the server closes would leave its keep-alive connection
   * open, and the server would wait for it to time out.
   */
  async beforeApplicationShutdown(): Promise<void> {
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
    await Promise.allSettled([...this.delivering]);
  }

  private async deliver(callback: PaymentCallbackDto): Promise<void> {
    const body = JSON.stringify(callback);
    try {
      const response = await fetch(this.callbackUrl(), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [PAYMENT_SIGNATURE_HEADER]: signPaymentBody(body, this.config.payment.webhookSecret),
        },
        body,
      });
      const answer = (await response.json().catch(() => ({}))) as { outcome?: unknown; error?: { code?: unknown } };
      this.metrics.countPaymentCallback(response.status, String(answer.outcome ?? answer.error?.code ?? 'unknown'));
      if (!response.ok) this.logger.warn(`Callback for ${callback.outTradeNo} answered ${response.status}`);
    } catch (error) {
      this.logger.warn(`Callback for ${callback.outTradeNo} failed: ${errorMessage(error)}`);
    }
  }

  private callbackUrl(): string {
    if (this.config.payment.callbackUrl) return this.config.payment.callbackUrl;
    const address = this.httpHost.httpAdapter.getHttpServer().address() as { port: number } | null;
    return `http://127.0.0.1:${address?.port ?? this.config.http.port}/api/payments/callback`;
  }
}
