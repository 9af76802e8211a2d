import { SaleRepository } from '@flash-sale/db';
import { DomainError, ErrorCode, isSaleId, type SaleDefinition } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';

/** How long a sale's definition is reused from memory. Only an admin's edit changes one (forget()). */
const TTL_MS = 2_000;

/**
 * Sale definitions on the purchase path. A short in-process cache keeps MySQL off the hot path; it
 * holds only immutable fields (name, price, window, limit, strategy), never stock, so a stale entry
 * can never sell a unit: Redis and MySQL decide that.
 */
@Injectable()
export class SaleCatalog {
  private readonly cache = new Map<string, { sale: SaleDefinition; until: number }>();
  /**
   * One MySQL read per sale at a time: when an entry expires under load, every request in flight
   * would otherwise read the same row.
   */
  private readonly loading = new Map<string, Promise<SaleDefinition>>();
  /**
   * Edits seen per sale (forget()): a read that began before an edit may answer with the sale as it was,
   * and must neither fill the cache with it nor be joined by a read that comes after the edit.
   */
  private readonly edits = new Map<string, number>();

  constructor(private readonly sales: SaleRepository) {}

  async get(saleId: string): Promise<SaleDefinition> {
    const cached = this.peek(saleId);
    if (cached) return cached;
    return this.loading.get(saleId) ?? this.startLoading(saleId);
  }

  /**
   * Drops this instance's copy after an admin edited the sale (name, window). Other API instances
   * keep theirs for at most TTL_MS; the window they check meanwhile is the one Redis also holds.
   */
  forget(saleId: string): void {
    this.cache.delete(saleId);
    this.loading.delete(saleId);
    if (this.edits.size > 10_000) this.edits.clear();
    this.edits.set(saleId, (this.edits.get(saleId) ?? 0) + 1);
  }

  /**
   * The sale if it is in the cache and fresh; never waits for MySQL. Past half its life an entry is
   * reloaded in the background, so a sale in steady demand never drops out of the cache: otherwise every
   * request arriving during the reload would take the slow path (for the sold-out answer, Redis's).
   */
  peek(saleId: string): SaleDefinition | undefined {
    const cached = this.cache.get(saleId);
    if (!cached) return undefined;
    const left = cached.until - Date.now();
    if (left <= 0) return undefined;
    if (left < TTL_MS / 2 && !this.loading.has(saleId)) this.reloadInBackground(saleId);
    return cached.sale;
  }

  private reloadInBackground(saleId: string): void {
    // A failed reload leaves the entry to expire: the next request reads MySQL itself and gets its error.
    this.startLoading(saleId).catch(() => undefined);
  }

  /** One read of the sale, shared by whoever asks while it is out (until an edit: forget()). */
  private startLoading(saleId: string): Promise<SaleDefinition> {
    const loading: Promise<SaleDefinition> = this.load(saleId).finally(() => {
      if (this.loading.get(saleId) === loading) this.loading.delete(saleId);
    });
    this.loading.set(saleId, loading);
    return loading;
  }

  private async load(saleId: string): Promise<SaleDefinition> {
    const edit = this.edits.get(saleId);
    const sale = isSaleId(saleId) ? await this.sales.findById(saleId) : null;
    if (!sale) throw new DomainError(ErrorCode.SaleNotFound, `No sale with id ${saleId}`);
    if (this.edits.get(saleId) === edit) this.cache.set(saleId, { sale, until: Date.now() + TTL_MS });
    return sale;
  }
}
