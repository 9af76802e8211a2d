import type { SaleLayout } from '@flash-sale/domain';
import type { DataSource } from 'typeorm';

/**
 * A sale's Redis layout (its bucket count) for code that knows only its id. The count is fixed when the
 * sale is created, so a process remembers it once read: no other process can make it stale.
 */
export class SaleLayouts {
  private readonly known = new Map<string, number>();

  constructor(private readonly dataSource: DataSource) {}

  async of(saleId: string): Promise<SaleLayout> {
    let buckets = this.known.get(saleId);
    if (buckets === undefined) {
      const [row] = (await this.dataSource.query('SELECT buckets FROM sales WHERE id = ?', [saleId])) as {
        buckets: number;
      }[];
      // A sale that does not exist has no keys anywhere but where one bucket's would be.
      if (!row) return { id: saleId, buckets: 1 };
      buckets = Number(row.buckets);
      if (this.known.size > 100_000) this.known.clear();
      this.known.set(saleId, buckets);
    }
    return { id: saleId, buckets };
  }
}
