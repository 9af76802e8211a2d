import { type Connection, createConnection, type RowDataPacket } from 'mysql2/promise';

/** One reading of the sale's end in MySQL: the value was MySQL's at some instant in [startedAt, answeredAt]. */
export interface EndsAtSample {
  startedAt: number;
  answeredAt: number;
  endsAt: number;
}

/** How often the sampler reads MySQL's end while a run plays. */
const SAMPLE_EVERY_MS = 250;
/** How long stopping waits for a reading in progress. */
const STOP_WAIT_MS = 5_000;
/** A reading not answered by then is given up, its connection with it (a MySQL that will not come back on it). */
const READING_TIMEOUT_MS = 5_000;

/**
 * The sale's end as MySQL records it, over time: read every `SAMPLE_EVERY_MS` and right after each admin
 * action's answer, on a connection of its own (the app's clock convention: DATETIMEs in UTC). A paused
 * MySQL just delays the next reading; a reading that fails drops its connection and the next one opens
 * another, so the readings go on after MySQL restarts or its address moves to a promoted replica. The answer rule "no purchase after the end" judges purchases
 * against these readings (test/chaos/answer-rules.ts).
 */
export class SaleWindowSampler {
  readonly samples: EndsAtSample[] = [];
  private connection: Connection | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Readings run one at a time on the one connection. */
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;

  /** `databaseUrl`: asked at each connection (the machines world's primary may have moved since). */
  constructor(
    private readonly databaseUrl: () => string,
    private readonly saleId: string,
  ) {}

  async start(): Promise<void> {
    this.connection = await this.connect();
    await this.sample();
    const tick = () => {
      if (this.stopped) return;
      void this.sample().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, SAMPLE_EVERY_MS);
      });
    };
    this.timer = setTimeout(tick, SAMPLE_EVERY_MS);
  }

  /** One reading now (after the ones queued; it waits for a paused MySQL); a failed reading records nothing. */
  sample(): Promise<void> {
    this.chain = this.chain.then(async () => {
      if (this.stopped && !this.connection) return;
      const startedAt = Date.now();
      try {
        this.connection ??= await this.connect();
        const [[row]] = await this.connection.query<({ ends_at: Date } & RowDataPacket)[]>({
          sql: 'SELECT ends_at FROM sales WHERE id = ?',
          values: [this.saleId],
          timeout: READING_TIMEOUT_MS,
        });
        if (row) this.samples.push({ startedAt, answeredAt: Date.now(), endsAt: row.ends_at.getTime() });
      } catch {
        // MySQL gone for a moment: the next reading, on a new connection, tells.
        this.connection?.destroy();
        this.connection = undefined;
      }
    });
    return this.chain;
  }

  private connect(): Promise<Connection> {
    return createConnection({ uri: this.databaseUrl(), timezone: 'Z', connectTimeout: READING_TIMEOUT_MS });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    // A reading stuck on a MySQL that never came back must not hold the explorer; nor may the goodbye,
    // which waits for the server's answer: a connection whose reading did not end is destroyed.
    const settled = await Promise.race([
      this.chain.then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), STOP_WAIT_MS).unref()),
    ]);
    if (settled) await this.connection?.end().catch(() => undefined);
    else this.connection?.destroy();
    this.connection = undefined;
  }
}
