import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { exited } from '../../support/child-process';

/** The redis-lock holder in a process of its own (test/support/lock-holder.mjs, shared with redis-lock.int.spec.ts). */
const HOLDER_SCRIPT = [join(__dirname, '..', '..', 'support'), join(__dirname, '..', '..', '..', '..', '..', 'support')]
  .map((dir) => join(dir, 'lock-holder.mjs'))
  .find((path) => existsSync(path))!;

/** The holder's lock lives this long unless renewed; the pause outlasts it by far. */
export const HOLDER_LOCK_TTL_MS = 1_500;

type HolderEvent = { event: string; token?: number; claimed?: boolean; landed?: boolean };

/**
 * A buyer of a redis-lock sale that takes the sale's lock, claims its fencing token and reads the
 * stock — then the nemesis stops it (SIGSTOP) past the lock's TTL, as a GC pause or a stopped VM does,
 * while the API's buyers take the lock after it. Resumed, it writes one unit, fenced: the write must
 * not land once a newer holder has claimed the fence.
 */
export class PausedLockHolder {
  private readonly events: HolderEvent[] = [];
  private readonly waiters: (() => void)[] = [];

  private constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        this.events.push(JSON.parse(line) as HolderEvent);
      } catch {
        return;
      }
      for (const wake of this.waiters.splice(0)) wake();
    });
    child.once('exit', () => {
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /**
   * Starts a holder and resolves once it holds the lock and has read the stock (its fencing token), or
   * undefined if it could not (the lock busy, Redis or MySQL not answering within `timeoutMs`).
   */
  static async lockAndRead(
    env: Record<string, string>,
    saleId: string,
    timeoutMs: number,
  ): Promise<{ holder: PausedLockHolder; fence: number } | undefined> {
    const child = spawn(process.execPath, [HOLDER_SCRIPT], {
      env: { ...process.env, ...env, SALE_ID: saleId, LOCK_TTL_MS: String(HOLDER_LOCK_TTL_MS) },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const holder = new PausedLockHolder(child);
    const read = await holder.next('read', timeoutMs);
    const locked = holder.events.find((event) => event.event === 'locked');
    if (!read || !locked?.claimed || locked.token === undefined) {
      await holder.kill();
      return undefined;
    }
    return { holder, fence: locked.token };
  }

  pause(): void {
    this.child.kill('SIGSTOP');
  }

  /** Resumes it and lets it write: true if its fenced write landed. */
  async resumeAndWrite(timeoutMs: number): Promise<boolean | undefined> {
    this.child.kill('SIGCONT');
    this.child.stdin!.write('write\n');
    const wrote = await this.next('write', timeoutMs);
    await this.kill();
    return wrote?.landed;
  }

  /** SIGKILL (resumed first, so that a stopped process really goes). */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGKILL');
    this.child.kill('SIGCONT');
    await exited(this.child);
  }

  private async next(event: string, timeoutMs: number): Promise<HolderEvent | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find((candidate) => candidate.event === event);
      if (found) return found;
      if (this.child.exitCode !== null || this.child.signalCode !== null || Date.now() >= deadline) return undefined;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}
