import {
  DatabaseHealth,
  SaleBooksRepository,
  type SaleHolding,
  SaleLayouts,
  SaleRepository,
  StockLeaseRepository,
} from '@flash-sale/db';
import { singleFlight } from '@flash-sale/stock';
import { errorMessage, oversoldPeakUnits, oversoldUnits } from '@flash-sale/domain';
import { DriftBoard, HandoffStream, RedisConnection, SaleActivity, WaitingRoomScripts } from '@flash-sale/redis';
import { Injectable, type Logger } from '@nestjs/common';
import { Gauge, type Registry } from 'prom-client';
import { withDeadline } from '../common/deadline';
import { ProductQueues } from '@flash-sale/queue';

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

/**
 * The gauges read from Redis, MySQL or a queue at scrape time: the dependency probes, Redis persistence,
 * oversold units and their peak, queue depth, stock drift, hand-off backlog, waiting rooms and lease
 * units. No request path touches them.
 */
@Injectable()
export class ScrapedGauges {
  constructor(
    private readonly productQueues: ProductQueues,
    private readonly leaseRepository: StockLeaseRepository,
    private readonly activity: SaleActivity,
    private readonly handoff: HandoffStream,
    private readonly drifts: DriftBoard,
    private readonly layouts: SaleLayouts,
    private readonly saleBooks: SaleBooksRepository,
    private readonly redis: RedisConnection,
    private readonly database: DatabaseHealth,
    private readonly sales: SaleRepository,
    private readonly rooms: WaitingRoomScripts,
  ) {}

  /** Registers every gauge on `registry`; `logger` says what a scrape could not read. */
  registerOn(registry: Registry, logger: Logger): void {
    const scrapedGauge = scrapedGaugeOn(registry, logger);

    registerDependencyGauge(registry, logger, { redis: () => this.redis.ping(), mysql: () => this.database.ping() });

    scrapedGauge(
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
        for (const { node, persistence } of await this.redis.persistenceOfEachMaster()) {
          aofEnabled.set({ node }, persistence === 'aof' ? 1 : 0);
        }
      },
    );

    // The oversold series and its peak read the same holdings: one query per scrape, shared while it runs.
    const holdingsInFlight = new Map<string, Promise<SaleHolding[]>>();
    const recentHoldings = () =>
      singleFlight(holdingsInFlight, 'recent', () =>
        this.saleBooks.recentHoldings(new Date(Date.now() - SALE_SERIES_WINDOW_MS)),
      );
    scrapedGauge(
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

    scrapedGauge(
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
        const recent = await recentHoldings();
        for (const sale of recent) peak.set({ sale: sale.saleId, strategy: sale.strategy }, oversoldPeakUnits(sale));
        // An oversell held by paid orders is never given back: recorded here, it outlives the sale's window.
        await this.saleBooks.recordOversoldPeaks(
          recent
            .filter((sale) => oversoldUnits(sale) > sale.oversoldPeak)
            .map((sale) => ({ saleId: sale.saleId, oversold: oversoldUnits(sale) })),
        );
      },
    );

    scrapedGauge(
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
              logger.warn(`Queue depth of "${queue.name}" unavailable: ${errorMessage(error)}`);
            }
          }),
        ),
    );

    scrapedGauge(
      {
        name: 'flash_sale_stock_drift',
        help: 'Units by which Redis and MySQL disagree per sale, as last measured by the reconciliation job (0 = agree)',
        labelNames: ['sale'],
        from: 'Redis',
        what: 'Stock drift',
      },
      async (stockDrift) => {
        for (const [sale, drift] of Object.entries(await this.drifts.all())) {
          if (Number.isFinite(Number(drift))) stockDrift.set({ sale }, Number(drift));
        }
      },
    );

    scrapedGauge(
      {
        name: 'flash_sale_handoff_backlog',
        help: "Reservations waiting in a sale's hand-off stream to be written to MySQL (recently active sales)",
        labelNames: ['sale'],
        from: 'Redis',
        what: 'Hand-off backlog',
      },
      async (handoffBacklog) => {
        const saleIds = await this.activity.activeSince(Date.now() - HANDOFF_SERIES_WINDOW_MS);
        const backlogs = await Promise.all(
          saleIds.map(async (saleId) => this.handoff.backlog(await this.layouts.of(saleId))),
        );
        saleIds.forEach((sale, i) => handoffBacklog.set({ sale }, backlogs[i] ?? 0));
      },
    );

    scrapedGauge(
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
        for (const sale of await this.sales.roomSaleIdsEndingAfter(new Date(Date.now() - SALE_SERIES_WINDOW_MS))) {
          const state = await this.rooms.state(sale);
          if (!state) continue;
          room.set({ sale, measure: 'waiting' }, state.waiting);
          room.set({ sale, measure: 'shopping' }, state.shopping);
          room.set({ sale, measure: 'admitted' }, state.admitted);
          room.set({ sale, measure: 'admit_rate' }, state.measuredAdmitPerSecond);
        }
      },
    );

    scrapedGauge(
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
        const ledgers = await this.leaseRepository.recentLedgers(new Date(Date.now() - SALE_SERIES_WINDOW_MS));
        for (const [sale, ledger] of ledgers) {
          const values = { ...ledger, in_doubt: ledger.inDoubt };
          for (const state of LEASE_STATES) leaseUnits.set({ sale, state }, values[state]);
        }
      },
    );
  }
}

interface ScrapedGaugeSpec<Label extends string> {
  name: string;
  help: string;
  labelNames: readonly Label[];
  /** The source, named in the deadline's error. */
  from: string;
  /** What the warning says is unavailable. */
  what: string;
  aggregator?: 'max' | 'min';
}

/**
 * Registers gauges read from Redis, MySQL or a queue at scrape time. Every process reads the same values,
 * so over several processes a gauge is their `max` (or `min`), not their sum (cluster-metrics.ts). A
 * source that does not answer within SCRAPE_DEADLINE_MS leaves the gauge empty: the scrape still answers
 * while it is down.
 */
function scrapedGaugeOn(registry: Registry, logger: Logger) {
  return <Label extends string>(spec: ScrapedGaugeSpec<Label>, read: (into: Gauge<Label>) => Promise<unknown>) => {
    const { name, help, labelNames, from, what, aggregator = 'max' } = spec;
    const scraped: Gauge<Label> = new Gauge({
      name,
      help,
      labelNames,
      aggregator,
      registers: [registry],
      collect: async () => {
        scraped.reset();
        try {
          await withDeadline(read(scraped), SCRAPE_DEADLINE_MS, from);
        } catch (error) {
          logger.warn(`${what} unavailable: ${errorMessage(error)}`);
        }
      },
    });
  };
}

/**
 * `flash_sale_dependency_up`: 1 when the dependency answered this process's probe at scrape time, 0
 * when it failed or did not answer in time. Over several processes the `min`: one cut off shows.
 */
function registerDependencyGauge(
  registry: Registry,
  logger: Logger,
  probes: Record<string, () => Promise<void>>,
): void {
  const up: Gauge<'dependency'> = new Gauge({
    name: 'flash_sale_dependency_up',
    help: 'Whether Redis and MySQL answered this API process at scrape time (1) or not (0)',
    labelNames: ['dependency'],
    aggregator: 'min',
    registers: [registry],
    collect: async () => {
      await Promise.all(
        Object.entries(probes).map(async ([dependency, probe]) => {
          try {
            await withDeadline(probe(), DEPENDENCY_PROBE_DEADLINE_MS, dependency);
            up.set({ dependency }, 1);
          } catch (error) {
            logger.warn(`${dependency} did not answer the metrics probe: ${errorMessage(error)}`);
            up.set({ dependency }, 0);
          }
        }),
      );
    },
  });
}
