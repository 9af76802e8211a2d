import { createServer, type Server, Socket } from 'node:net';

interface ArmedDrop {
  marker: Buffer;
  /** Called at the moment the reply is dropped (Redis has run the command). */
  onDrop: (() => void) | undefined;
  resolve(dropped: boolean): void;
  timer: NodeJS.Timeout;
}

/**
 * A TCP proxy between the API and Redis that can lose a reply: armed with a marker (a submit token),
 * it forwards the next command that carries it to Redis, lets Redis run it, then destroys the API's
 * connection instead of passing the reply on. The API sees what a timeout or a dropped connection
 * looks like after a command was sent: it cannot know whether the command ran (it did).
 *
 * While Redis is down, connections through the proxy are closed at once, like connections to Redis
 * itself. Used by the fault-schedule explorer (test/chaos) and test/outages/outage-sequences.int.spec.ts.
 */
export class ReplyDroppingProxy {
  private readonly server: Server;
  private readonly connections = new Set<Socket>();
  private armed: ArmedDrop | undefined;
  private dropReplyMatching: ((reply: Buffer) => boolean) | undefined;
  /** How many replies it dropped, for the summary. */
  dropped = 0;

  private constructor(private redisPort: number) {
    this.server = createServer((client) => this.accept(client));
  }

  static async start(listenPort: number, redisPort: number): Promise<ReplyDroppingProxy> {
    const proxy = new ReplyDroppingProxy(redisPort);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(listenPort, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  get port(): number {
    const address = this.server.address();
    if (!address || typeof address === 'string') throw new Error('the proxy is not listening');
    return address.port;
  }

  /**
   * Drops the reply to the next command that contains `marker`; resolves true once it did, false when
   * no such command came within `timeoutMs`.
   */
  dropReplyTo(marker: string, timeoutMs: number, onDrop?: () => void): Promise<boolean> {
    this.disarm(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.disarm(false), timeoutMs);
      this.armed = { marker: Buffer.from(marker), onDrop, resolve, timer };
    });
  }

  /** Drops the next reply that `matches` (by what Redis answered rather than by what was asked). */
  dropNextReplyWhere(matches: (reply: Buffer) => boolean): void {
    this.dropReplyMatching = matches;
  }

  /** Forgets an armed drop that has not happened (the request never sent its command to Redis). */
  cancelDrop(): void {
    this.disarm(false);
  }

  /** Sends new connections to the Redis on `redisPort` (a promoted replica), cutting the current ones. */
  retarget(redisPort: number): void {
    this.redisPort = redisPort;
    this.cutAll();
  }

  /** Cuts every connection (as a Redis crash does). */
  cutAll(): void {
    for (const socket of this.connections) socket.destroy();
  }

  async close(): Promise<void> {
    this.disarm(false);
    this.cutAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private disarm(dropped: boolean): void {
    const armed = this.armed;
    this.armed = undefined;
    if (!armed) return;
    clearTimeout(armed.timer);
    armed.resolve(dropped);
  }

  private accept(client: Socket): void {
    const upstream = new Socket();
    this.connections.add(client);
    this.connections.add(upstream);
    let dropNextReply: { onDrop: (() => void) | undefined } | undefined;
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
      this.connections.delete(client);
      this.connections.delete(upstream);
    };
    client.on('error', closeBoth);
    upstream.on('error', closeBoth);
    client.on('close', closeBoth);
    upstream.on('close', closeBoth);
    client.pause();
    upstream.connect(this.redisPort, '127.0.0.1', () => client.resume());
    client.on('data', (chunk: Buffer) => {
      if (this.armed && chunk.includes(this.armed.marker)) {
        dropNextReply = { onDrop: this.armed.onDrop };
        this.dropped += 1;
        this.disarm(true);
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (this.dropReplyMatching?.(chunk)) {
        this.dropReplyMatching = undefined;
        this.dropped += 1;
        closeBoth();
        return;
      }
      if (dropNextReply) {
        // Redis ran the command and answered; the answer never arrives.
        closeBoth();
        dropNextReply.onDrop?.();
        return;
      }
      client.write(chunk);
    });
  }
}
