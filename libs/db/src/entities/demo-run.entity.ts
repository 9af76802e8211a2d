import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type DemoRunStatus = 'running' | 'finished' | 'failed';

/**
 * One oversell demonstration (POST /api/admin/demo-runs): what was asked and, per strategy, what
 * happened. Kept so that past runs can be listed and compared; the results are one JSON document.
 */
@Entity('demo_runs')
export class DemoRunEntity {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id!: string;

  @Column({ type: 'varchar', length: 20 })
  status!: DemoRunStatus;

  @Column({ type: 'int', unsigned: true })
  stock!: number;

  @Column({ type: 'int', unsigned: true })
  buyers!: number;

  /** The run's whole report (strategies, progress, per-strategy results) as JSON. */
  @Column({ type: 'mediumtext' })
  report!: string;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'finished_at', type: 'datetime', precision: 3, nullable: true })
  finishedAt!: Date | null;
}
