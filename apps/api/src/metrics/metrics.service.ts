import {
  DatabaseHealth,
  SaleBooksRepository,
  type SaleHolding,
  SaleLayouts,
  SaleRepository,
  StockLeaseRepository,
} from '@flash-sale/db';
import { singleFlight } from '@flash-sale/stock';
import { DomainError, errorMessage, oversoldPeakUnits, oversoldUnits } from '@flash-sale/domain';
import { DriftBoard, HandoffStream, RedisConnection, SaleActivity, WaitingRoomScripts } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { toErrorResponse } from '../common/error-body';
import { clusterMetricsFor } from './cluster-metrics';
import { withDeadline } from '../common/deadline';
import { ProductQueues } from '@flash-sale/queue';
import type { ReservationLatency } from '@flash-sale/contract';
import { RecentLatency } from './recent-latency';

/** Job states that make up the queue depth (completed jobs are done: their order row proves them). */
const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/** A scrape must answer even while Redis is down: it then lacks the series Redis feeds. */
const SCRAPE_DEADLINE_MS = 1_000;
/** Sales that ended longer ago than this drop out of the per-sale lease and oversold series. */
const SALE_SERIES_WINDOW_MS = 3_600_000;
const LEASE_STATES = ['granted', 'converted', 'in_doubt', 'returned', 'outstanding'] as const;
/** Sales active this recently get a hand-off backlog series. */
const HANDOFF_SERIES_WINDOW_MS = 15 * 60_000;
/** Within the scrape's own deadline, so that a dependency that does not answer is reported down (0). */
const DEPENDENCY_PROBE_DEADLINE_MS = SCRAPE_DEADLINE_MS / 2;
/** The admin console's reservation latency: recent enough to follow a burst, long enough to hold a few calls. */
const RECENT_LATENCY_WINDOW_MS = 10_000;

export type PurchaseOutcome = 'accepted' | 'replayed';

/**
 * The API's Prometheus registry (`GET /metrics`). Its own registry rather than prom-client's global
 * one, so that several apps in one process (the tests) never register a series twice. Queue depth and
 * stock drift are read at scrape time; the purchase path only counts and times.
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

  constructor(
    private readonly productQueues: ProductQueues,
    leaseRepository: StockLeaseRepository,
    activity: SaleActivity,
    handoff: HandoffStream,
    drifts: DriftBoard,
    layouts: SaleLayouts,
    saleBooks: SaleBooksRepository,
    redis: RedisConnection,
    database: DatabaseHealth,
    sales: SaleRepository,
    rooms: WaitingRoomScripts,
  ) {
    collectDefaultMetrics({ register: this.registry });

    this.dependencyGauge({ redis: () => redis.ping(), mysql: () => database.ping() });

    this.scrapedGauge(
      {
        name: 'flash_sale_redis_aof_enabled',
        help:
          'Whether each Redis node that takes writes (each master of a cluster) keeps its append-only file (1) or ' +
          'not (0): without it, a Redis crash loses the purchases not yet written to MySQL',
        labelNames: ['node'],
        from: 'Redis',
        what: 'Redis persistence',
        aggregator: 'min',
      },
      async (aofEnabled) => {
        for (const { node, persistence } of await redis.persistenceOfEachMaster()) {
          aofEnabled.set({ node }, persistence === 'aof' ? 1 : 0);
        }
      },
    );

    // The oversold series and its peak read the same holdings: one query per scrape, shared while it runs.
    const holdingsInFlight = new Map<string, Promise<SaleHolding[]>>();
    const recentHoldings = () =>
      singleFlight(holdingsInFlight, 'recent', () =>
        saleBooks.recentHoldings(new Date(Date.now() - SALE_SERIES_WINDOW_MS)),
      );
    this.scrapedGauge(
      {
        name: 'flash_sale_oversold_units',
        help:
          'Units held by orders (PENDING_PAYMENT + PAID) beyond the stock, per recent sale of any strategy: 0 but for ' +
          'the unsafe strategies of the oversell demonstration',
        labelNames: ['sale', 'strategy'],
        from: 'MySQL',
        what: 'Oversold units',
      },
      async (oversold) => {
        for (const sale of await recentHoldings()) {
          oversold.set({ sale: sale.saleId, strategy: sale.strategy }, oversoldUnits(sale));
        }
      },
    );

    this.scrapedGauge(
      {
        name: 'flash_sale_oversold_peak_units',
        help:
          'The most units a sale ever held beyond its stock, even if expiries or cancels gave them back since; per ' +
          'recent sale, and per sale ever oversold however long ago it ended',
        labelNames: ['sale', 'strategy'],
        from: 'MySQL',
        what: 'Oversold peak',
      },
      async (peak) => {
        const sales = await recentHoldings();
        for (const sale of sales) peak.set({ sale: sale.saleId, strategy: sale.strategy }, oversoldPeakUnits(sale));
        // An oversell held by paid orders is never given back: recorded here, it outlives the sale's window.
        await saleBooks.recordOversoldPeaks(
          sales
            .filter((sale) => oversoldUnits(sale) > sale.oversoldPeak)
            .map((sale) => ({ saleId: sale.saleId, oversold: oversoldUnits(sale) })),
        );
      },
    );

    this.scrapedGauge(
      {
        name: 'flash_sale_queue_depth',
        help: 'Jobs in a BullMQ queue by state, read at scrape time',
        labelNames: ['queue', 'state'],
        from: 'queue',
        what: 'Queue depth',
      },
      (queueDepth) =>
        Promise.all(
          this.productQueues.all.map(async (queue) => {
            // Each queue on its own: one that does not answer leaves the others' series.
            try {
              const counts = await withDeadline(queue.getJobCounts(...QUEUE_STATES), SCRAPE_DEADLINE_MS, 'queue');
              for (const state of QUEUE_STATES) queueDepth.set({ queue: queue.name, state }, counts[state] ?? 0);
            } catch (error) {
              this.logger.warn(`Queue depth of "${queue.name}" unavailable: ${errorMessage(error)}`);
            }
          }),
        ),
    );

    this.scrapedGauge(
      {
        name: 'flash_sale_stock_drift',
        help: 'Units by which Redis and MySQL disagree per sale, as last measured by the reconciliation job (0 = agree)',
        labelNames: ['sale'],
        from: 'Redis',
        what: 'Stock drift',
      },
      async (stockDrift) => {
        for (const [sale, drift] of Object.entries(await drifts.all())) {
          if (Number.isFinite(Number(drift))) stockDrift.set({ sale }, Number(drift));
        }
      },
    );

    this.scrapedGauge(
      {
        name: 'flash_sale_handoff_backlog',
        help: "Reservations waiting in a sale's hand-off stream to be written to MySQL (recently active sales)",
        labelNames: ['sale'],
        from: 'Redis',
        what: 'Hand-off backlog',
      },
      async (handoffBacklog) => {
        const saleIds = await activity.activeSince(Date.now() - HANDOFF_SERIES_WINDOW_MS);
        const backlogs = await Promise.all(saleIds.map(async (saleId) => handoff.backlog(await layouts.of(saleId))));
        saleIds.forEach((sale, i) => handoffBacklog.set({ sale }, backlogs[i] ?? 0));
      },
    );

    this.scrapedGauge(
      {
        name: 'flash_sale_waiting_room',
        help:
          'Per sale with a waiting room (recent ones): buyers waiting, admitted and still shopping, admitted since the ' +
          'opening, and the admission rate measured over the last seconds (admitted per second)',
        labelNames: ['sale', 'measure'],
        from: 'Redis',
        what: 'Waiting rooms',
      },
      async (room) => {
        for (const sale of await sales.roomSaleIdsEndingAfter(new Date(Date.now() - SALE_SERIES_WINDOW_MS))) {
          const state = await rooms.state(sale);
          if (!state) continue;
          room.set({ sale, measure: 'waiting' }, state.waiting);
          room.set({ sale, measure: 'shopping' }, state.shopping);
          room.set({ sale, measure: 'admitted' }, state.admitted);
          room.set({ sale, measure: 'admit_rate' }, state.measuredAdmitPerSecond);
        }
      },
    );

    this.scrapedGauge(
      {
        name: 'flash_sale_lease_units',
        help:
          'Stock leased from MySQL to Redis per sale (recent Redis-backed sales): granted, converted to orders, ' +
          'in doubt (a lost Redis incarnation, awaiting settlement), returned by settlements, outstanding (sales.leased)',
        labelNames: ['sale', 'state'],
        from: 'MySQL',
        what: 'Lease units',
      },
      async (leaseUnits) => {
        const ledgers = await leaseRepository.recentLedgers(new Date(Date.now() - SALE_SERIES_WINDOW_MS));
        for (const [sale, ledger] of ledgers) {
          const values = { ...ledger, in_doubt: ledger.inDoubt };
          for (const state of LEASE_STATES) leaseUnits.set({ sale, state }, values[state]);
        }
      },
    );
  }

  /**
   * A gauge read from Redis, MySQL or a queue at scrape time. Every process reads the same values, so
   * over several processes it is their `max` (or `min`), not their sum (cluster-metrics.ts). A source that
   * does not answer within SCRAPE_DEADLINE_MS leaves the gauge empty: the scrape still answers while it is down.
   */
  private scrapedGauge<Label extends string>(
    gauge: {
      name: string;
      help: string;
      labelNames: readonly Label[];
      from: string;
      what: string;
      aggregator?: 'max' | 'min';
    },
    read: (into: Gauge<Label>) => Promise<unknown>,
  ): void {
    const { name, help, labelNames, from, what, aggregator = 'max' } = gauge;
    const scraped: Gauge<Label> = new Gauge({
      name,
      help,
      labelNames,
      aggregator,
      registers: [this.registry],
      collect: async () => {
        scraped.reset();
        try {
          await withDeadline(read(scraped), SCRAPE_DEADLINE_MS, from);
        } catch (error) {
          this.logger.warn(`${what} unavailable: ${errorMessage(error)}`);
        }
      },
    });
  }

  /**
   * `flash_sale_dependency_up`: 1 when the dependency answered this process's probe at scrape time, 0
   * when it failed or did not answer in time. Over several processes the `min`: one cut off shows.
   */
  private dependencyGauge(probes: Record<string, () => Promise<void>>): void {
    const up: Gauge<'dependency'> = new Gauge({
      name: 'flash_sale_dependency_up',
      help: 'Whether Redis and MySQL answered this API process at scrape time (1) or not (0)',
      labelNames: ['dependency'],
      aggregator: 'min',
      registers: [this.registry],
      collect: async () => {
        await Promise.all(
          Object.entries(probes).map(async ([dependency, probe]) => {
            try {
              await withDeadline(probe(), DEPENDENCY_PROBE_DEADLINE_MS, dependency);
              up.set({ dependency }, 1);
            } catch (error) {
              this.logger.warn(`${dependency} did not answer the metrics probe: ${errorMessage(error)}`);
              up.set({ dependency }, 0);
            }
          }),
        );
      },
    });
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
