/**
 * Every Redis key of one sale, built in this one place. All of them share the hash tag
 * `{sale:<id>}`, so every script touches a single Redis Cluster slot; scripts receive them in KEYS
 * and never build a key themselves.
 */
export class SaleKeys {
  readonly meta: string;
  readonly stock: string;
  readonly buyers: string;
  readonly reservations: string;
  readonly replays: string;
  readonly returned: string;
  readonly grants: string;
  private readonly base: string;

  constructor(
    prefix: string,
    readonly saleId: string,
  ) {
    this.base = `${prefix}:{sale:${saleId}}`;
    this.meta = `${this.base}:meta`;
    this.stock = `${this.base}:stock`;
    this.buyers = `${this.base}:buyers`;
    this.reservations = `${this.base}:reservations`;
    this.replays = `${this.base}:replays`;
    this.returned = `${this.base}:returned`;
    this.grants = `${this.base}:grants`;
  }

  token(token: string): string {
    return `${this.base}:token:${token}`;
  }

  /** Keys that make up the sale's state (token keys expire on their own). */
  all(): string[] {
    return [this.meta, this.stock, this.buyers, this.reservations, this.replays, this.returned, this.grants];
  }
}

export class KeyBuilder {
  /** Hash saleId -> drift (units), written by the reconciliation job, read by /metrics and the audit. */
  readonly reconciliation: string;
  /**
   * Pub/sub channel (not a key): the grant script publishes a sale's id here whenever a lease adds
   * units to its balance, so an API instance that remembered the sale as sold out forgets it at once.
   */
  readonly stockReturnedChannel: string;

  constructor(readonly prefix: string) {
    this.reconciliation = `${prefix}:reconciliation`;
    this.stockReturnedChannel = `${prefix}:stock-returned`;
  }

  sale(saleId: string): SaleKeys {
    return new SaleKeys(this.prefix, saleId);
  }
}
