import { type DynamicModule, Global, Inject, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { HandoffStream } from './handoff-stream';
import { RedisOutageReporter } from './outage-reporter';
import { RateLimiterStore } from './rate-limiter-store';
import {
  closeRedisClient,
  createRedisClient,
  failUnansweredOnDisconnect,
  type RedisClient,
  type RedisConnectionConfig,
} from './redis-client';
import { RedisConnection } from './redis-connection';
import { ReplicaAcks } from './replica-acks';
import { ReservationScripts } from './reservation-scripts';
import { SaleActivity } from './sale-activity';
import { KeyBuilder } from './sale-keys';
import { SaleLocks } from './sale-locks';
import { DriftBoard } from './drift-board';
import { SaleState } from './sale-state';
import { watchForSilentLinks } from './silent-link-watch';
import { StockReturnSubscription } from './stock-return-subscription';
import { WaitingRoomScripts } from './waiting-room-scripts';

/**
 * The raw ioredis client. Only the classes of this library (and QueueModule) use it: apps reach Redis
 * through the repositories below, which the lint rule in eslint.config.mjs enforces.
 */
export const REDIS_CLIENT = Symbol('REDIS_CLIENT');

export interface RedisModuleOptions extends RedisConnectionConfig {
  keyPrefix: string;
  /**
   * How many reconnect attempts a command waits for before it fails: the API answers 503 after a
   * couple rather than hold a request open while Redis is down; the worker can wait (ioredis default).
   */
  maxRetriesPerRequest?: number;
  /**
   * false: commands sent but unanswered when the connection drops fail at once instead of being sent
   * again on the next connection (ioredis's default): that Redis may have restarted without its data,
   * and a purchase must not run there before its sale's incarnation is verified (the API's
   * IncarnationGuard). The caller treats the failure as an uncertain outcome.
   */
  resendUnansweredCommands?: boolean;
  /**
   * true: the commands issued in one turn of the event loop go to Redis in one write (ioredis's
   * `enableAutoPipelining`). A process serving many requests at once then pays one system call (and Redis
   * one read) for many purchases' scripts instead of one each; order per connection is unchanged.
   */
  autoPipelining?: boolean;
  /**
   * A command Redis has not answered after this long fails (ioredis's `commandTimeout`): the API answers
   * `503` instead of holding the request while a silent partition keeps the connection open. Its outcome
   * is unknown, as for a lost connection (isRedisUnavailable), and a replay settles it.
   */
  commandTimeoutMs?: number;
}

/** The repositories over the product's Redis keys and scripts; every class here takes the one client. */
const REPOSITORIES = [
  ReservationScripts,
  SaleState,
  DriftBoard,
  SaleActivity,
  HandoffStream,
  RateLimiterStore,
  StockReturnSubscription,
  SaleLocks,
  ReplicaAcks,
  WaitingRoomScripts,
] as const;

/** Redis for a whole app: one client, one key builder, the repositories, one outage reporter. */
@Global()
@Module({})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS_CLIENT) private readonly client: RedisClient) {}

  static forRoot(options: RedisModuleOptions): DynamicModule {
    const {
      keyPrefix,
      maxRetriesPerRequest,
      resendUnansweredCommands,
      autoPipelining,
      commandTimeoutMs,
      ...connection
    } = options;
    const clientOptions = {
      ...(commandTimeoutMs === undefined ? {} : { commandTimeout: commandTimeoutMs }),
      ...(maxRetriesPerRequest === undefined ? {} : { maxRetriesPerRequest }),
      ...(resendUnansweredCommands === false ? { autoResendUnfulfilledCommands: false } : {}),
      ...(autoPipelining ? { enableAutoPipelining: true } : {}),
    };
    const outageLogger = new Logger('Redis');
    return {
      module: RedisModule,
      providers: [
        {
          provide: REDIS_CLIENT,
          useFactory: () => {
            const client = createRedisClient(connection, clientOptions);
            if (resendUnansweredCommands === false) failUnansweredOnDisconnect(client);
            // A partition that heals must not leave this client waiting on TCP's retransmission backoff.
            watchForSilentLinks(client);
            return client;
          },
        },
        { provide: KeyBuilder, useValue: new KeyBuilder(keyPrefix) },
        ...REPOSITORIES.map((repository) => ({
          provide: repository,
          inject: [REDIS_CLIENT, KeyBuilder],
          useFactory: (client: RedisClient, keys: KeyBuilder) => new repository(client, keys),
        })),
        {
          provide: RedisConnection,
          inject: [REDIS_CLIENT],
          useFactory: (client: RedisClient) => new RedisConnection(client),
        },
        {
          provide: RedisOutageReporter,
          inject: [REDIS_CLIENT],
          useFactory: (client: RedisClient) => {
            const reporter = new RedisOutageReporter((message) => outageLogger.warn(message));
            reporter.watch([client]);
            return reporter;
          },
        },
      ],
      exports: [REDIS_CLIENT, KeyBuilder, ...REPOSITORIES, RedisConnection, RedisOutageReporter],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await closeRedisClient(this.client);
  }
}
