import type { RedisClient } from './redis-client';

/**
 * Connection errors reach every client and every BullMQ queue built on them; unheard, ioredis and
 * BullMQ print each reconnect attempt to stderr. One line per outage is enough: the requests and jobs
 * that need Redis report their own failures. Every client and queue of a process is watched by the
 * same reporter, so an outage is reported once however many of them see it; `clients` reset the
 * report when they are ready again.
 */
export class RedisOutageReporter {
  private reported = false;

  constructor(private readonly report: (message: string) => void) {}

  watch(clients: readonly RedisClient[], alsoFailing: readonly NodeJS.EventEmitter[] = []): void {
    for (const client of clients as readonly NodeJS.EventEmitter[]) client.on('ready', () => (this.reported = false));
    for (const emitter of [...(clients as readonly NodeJS.EventEmitter[]), ...alsoFailing]) {
      emitter.on('error', (error: Error) => {
        if (this.reported) return;
        this.reported = true;
        this.report(`Redis connection lost: ${error.message}`);
      });
    }
  }
}
