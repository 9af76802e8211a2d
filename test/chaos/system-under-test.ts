import type { Cluster, Redis } from 'ioredis';
import type { Connection } from 'mysql2/promise';
import type { ReplyDroppingProxy } from '../support/reply-dropping-proxy';

/**
 * What a run's clients, its settling and its checker need of the system, whichever world the explorer
 * runs it in (docs/chaos.md "Worlds"): the processes on this machine (cluster.ts), or the deployment as
 * machines on a network (machines-cluster.ts). The nemesis of each world talks to its own class.
 */
export interface SystemUnderTest {
  /** The working directory: the processes' logs, and what a failing run leaves to read. */
  readonly dir: string;
  /** Where the clients send API instance `i`'s requests. */
  readonly apiUrls: readonly string[];
  readonly adminPassword: string;
  /** Redis's key prefix, for the checker's reads of the sale's keys. */
  readonly redisKeyPrefix: string;
  /**
   * Straight to MySQL's primary, for the checker and the sale's window (never through anything a fault
   * touches); read it each time it is needed: in the machines world a failover moves the primary.
   */
  readonly databaseUrl: string;
  /** When the latest API start began whose warm-up swept earlier warm-ups' ended sales (0: none seen). */
  readonly lastLeftoverSweepAtMs: number;
  /** How long after everything is restored the system may take to be quiet before that is itself a finding. */
  readonly quietWithinMs: number;
  /** Present in the world whose Redis link can lose a reply (`reply-lost`). */
  readonly proxy?: ReplyDroppingProxy;
  mysql(): Promise<Connection>;
  /** A client of Redis for the checker, not connected yet (a Redis Cluster client where Redis is one). */
  redisReader(): Redis | Cluster;
  /** The offset (ms) of API instance `index`'s wall clock (0 unless a fault skewed it). */
  clockOffsetMs(index: number): number;
  /** The faults in force now, in a few words (stamped on every answer). */
  faultsInForce(): string;
  /** Everything running, reachable and answering again: the start of quiet. */
  restoreAll(): Promise<void>;
  /** After an explorer error left the system in any state: brought back for the next run. */
  recover(): Promise<void>;
  /** A stopped MySQL resumed at once (before a clean-up that reads MySQL); nothing where none can stop. */
  resumeMysql(): void;
  stop(): Promise<void>;
  removeWorkingDirectory(): void;
}
