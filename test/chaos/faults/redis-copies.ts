import { join } from 'node:path';
import { ExplorerError, removeFolder } from '../explorer-error';
import type { RedisNode } from './redis-nodes';

/** Copies of Redis' file kept for `redis-restore-older` to choose from. */
const MAX_COPIES = 6;

/**
 * Copies of a Redis' data directory taken at chosen moments (a backup, an RDB snapshot, a lagging disk),
 * the newest MAX_COPIES kept in the explorer's working directory, for a restore to pick among.
 */
export class RedisCopies {
  private readonly copies: string[] = [];
  private serial = 0;

  constructor(private readonly dir: string) {}

  get count(): number {
    return this.copies.length;
  }

  /** A copy of `node`'s data as it is now; `fresh`: the copies taken before are dropped first. */
  take(node: RedisNode, options: { fresh?: boolean } = {}): void {
    if (options.fresh) for (const dir of this.copies.splice(0)) removeFolder(dir);
    this.serial += 1;
    const dir = join(this.dir, `redis-snapshot-${this.serial}`);
    node.copyDataTo(dir);
    this.copies.push(dir);
    while (this.copies.length > MAX_COPIES) removeFolder(this.copies.shift()!);
  }

  /** The copy `pick` names (modulo their number), the newest without one. */
  pick(pick?: number): string {
    if (this.copies.length === 0) throw new ExplorerError('no copy of Redis to restore');
    return this.copies[pick === undefined ? this.copies.length - 1 : pick % this.copies.length]!;
  }
}
