import type { DataSource, Repository } from 'typeorm';
import { DemoRunEntity } from './entities/demo-run.entity';

/** The oversell demonstration's runs, each stored with its whole report. */
export class DemoRunRepository {
  private readonly runs: Repository<DemoRunEntity>;

  constructor(dataSource: DataSource) {
    this.runs = dataSource.getRepository(DemoRunEntity);
  }

  findById(runId: string): Promise<DemoRunEntity | null> {
    return this.runs.findOneBy({ id: runId });
  }

  newestFirst(limit: number): Promise<DemoRunEntity[]> {
    return this.runs.find({ order: { createdAt: 'DESC' }, take: limit });
  }

  /** Inserts the run or replaces its report. */
  async save(run: Omit<DemoRunEntity, 'createdAt'>): Promise<void> {
    await this.runs.save(run);
  }
}
