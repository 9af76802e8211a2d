import { Column, Entity, PrimaryColumn } from 'typeorm';
import * as column from './columns';

export type DemoRunStatus = 'running' | 'finished' | 'failed';

/**
 * One oversell demonstration (POST /api/admin/demo-runs): what was asked and, per strategy, what
 * happened. Kept so that past runs can be listed and compared; the results are one JSON document.
 */
@Entity('demo_runs')
export class DemoRunEntity {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id!: string;

  @column.varchar(20)
  status!: DemoRunStatus;

  @column.unsignedInt()
  stock!: number;

  @column.unsignedInt()
  buyers!: number;

  /** The run's whole report (strategies, progress, per-strategy results) as JSON. */
  @Column({ type: 'mediumtext' })
  report!: string;

  @column.createdAt()
  createdAt!: Date;

  @column.instant('finished_at', { nullable: true })
  finishedAt!: Date | null;
}
