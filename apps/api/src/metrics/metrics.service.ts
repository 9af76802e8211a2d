import { DomainError } from '@flash-sale/domain';
import { Injectable, Logger } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { toErrorResponse } from '../common/error-body';
import { clusterMetricsFor } from './cluster-metrics';
import type { ReservationLatency } from '@flash-sale/contract';
import { RecentLatency } from './recent-latency';
import { ScrapedGauges } from './scraped-gauges';

/** The admin console's reservation latency: recent enough to follow a burst, long enough to hold a few calls. */
const RECENT_LATENCY_WINDOW_MS = 10_000;

export type PurchaseOutcome = 'accepted' | 'replayed';

/**
 * The API's Prometheus registry (`GET /metrics`). Its own registry rather than prom-client's global
 * one, so that several apps in one process (the tests) never register a series twice. The request paths
 * only count and time here; the gauges read from Redis, MySQL and the queues at scrape time are in
 * scraped-gauges.ts.
 */
@Injectable()
export class MetricsService {
  private readonly logger = new Logger(MetricsService.name);
  private readonly registry = new Registry();
  /** Several API processes on one port: a scrape answers for all of them (cluster-metrics.ts). */
  private readonly cluster = clusterMetricsFor(this.registry);

  private readonly purchases = new Counter({
    name: 'flash_sale_purchases_total',
    help: 'Purchase attempts by outcome: accepted, replayed (same token again) or the error code of the refusal',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly purchaseCounters = new Map<string, Counter.Internal>();

  private readonly shedPurchases = new Counter({
    name: 'flash_sale_purchases_shed_total',
    help: 'Purchases answered 503 at once by load shedding, by reason (backlog, event-loop)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  private readonly paymentCallbacks = new Counter({
    name: 'flash_sale_payment_callbacks_total',
    help: 'Callbacks the simulated payment provider delivered, by HTTP status and outcome (applied, duplicate, …)',
    labelNames: ['status', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly paidOrders = new Counter({
    name: 'flash_sale_orders_paid_total',
    help: 'Orders moved to PAID by a payment (a repeated notification of the same payment is not counted)',
    registers: [this.registry],
  });

  private readonly reservationScript = new Histogram({
    name: 'flash_sale_reservation_script_seconds',
    help: 'Latency of the reservation Lua script (one Redis round trip)',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [this.registry],
  });

  private readonly roomAnswers = new Counter({
    name: 'flash_sale_waiting_room_answers_total',
    help:
      'Waiting-room joins and polls by the state answered: waiting, admitted, sold_out, ended, or too-soon (429) and ' +
      'no-ticket (404)',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });

  /** One child per state, made once (see purchaseCounter). */
  private readonly roomAnswerCounters = new Map<string, Counter.Internal>();

  /** The reservation script's percentiles for the admin console, from the histogram above. */
  private readonly recentReservationLatency = new RecentLatency(RECENT_LATENCY_WINDOW_MS);

  constructor(scrapedGauges: ScrapedGauges) {
    collectDefaultMetrics({ register: this.registry });
    scrapedGauges.registerOn(this.registry, this.logger);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.cluster ? this.cluster.render() : this.registry.metrics();
  }

  /**
   * Percentiles of the reservation script calls this process timed over the last RECENT_LATENCY_WINDOW_MS
   * (recent-latency.ts); undefined on the first ask after a quiet spell.
   */
  async reservationLatency(): Promise<ReservationLatency | undefined> {
    const { values } = await this.reservationScript.get();
    const buckets = values
      .filter((value) => value.metricName === 'flash_sale_reservation_script_seconds_bucket')
      .map((value) => ({ le: value.labels.le === '+Inf' ? Infinity : Number(value.labels.le), count: value.value }));
    return this.recentReservationLatency.read(Date.now(), buckets);
  }

  /** Starts timing one reservation script call; call the result when the script has answered. */
  reservationTimer(): () => void {
    // A plain observe: prom-client's startTimer copies a labels object and hashes it on every call.
    const start = performance.now();
    return () => this.reservationScript.observe((performance.now() - start) / 1000);
  }

  countPurchase(outcome: PurchaseOutcome): void {
    this.purchaseCounter(outcome).inc();
  }

  /** A refused or failed purchase, labelled with the error code its caller receives. */
  countRefusedPurchase(error: unknown): void {
    this.purchaseCounter(error instanceof DomainError ? error.code : toErrorResponse(error).body.error.code).inc();
  }

  /** An order the payment moved to PAID (payments.service.ts), counted once committed. */
  countPaidOrder(): void {
    this.paidOrders.inc();
  }

  countPaymentCallback(status: number, outcome: string): void {
    this.paymentCallbacks.labels(String(status), outcome).inc();
  }

  /** A waiting-room join or poll, by the state it answered (or `too-soon`, `no-ticket`). */
  countRoomAnswer(state: string): void {
    let child = this.roomAnswerCounters.get(state);
    if (!child) {
      child = this.roomAnswers.labels(state);
      this.roomAnswerCounters.set(state, child);
    }
    child.inc();
  }

  /** A purchase refused by load shedding (protection/load-shedder.ts); also counted as UNAVAILABLE. */
  countShedPurchase(reason: string): void {
    this.shedPurchases.labels(reason).inc();
  }

  /**
   * The counter's child for one outcome, made once: `inc({ outcome })` would hash the label object on
   * every purchase. Outcomes are a small closed set (two, plus the error codes).
   */
  private purchaseCounter(outcome: string): Counter.Internal {
    let child = this.purchaseCounters.get(outcome);
    if (!child) {
      child = this.purchases.labels(outcome);
      this.purchaseCounters.set(outcome, child);
    }
    return child;
  }
}
