import type { DataSource } from 'typeorm';

/** Whether MySQL answers, for `/metrics` (flash_sale_dependency_up); readiness has terminus' own check. */
export class DatabaseHealth {
  constructor(private readonly dataSource: DataSource) {}

  async ping(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }
}
