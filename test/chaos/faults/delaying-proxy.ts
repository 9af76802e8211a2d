import { createServer, type Server, Socket } from 'node:net';

/**
 * A TCP proxy the nemesis can slow down, hold, or point at another server, while the processes behind
 * it keep their connection settings:
 * - `setDelay(ms)`: every chunk, in either direction, is passed on `ms` later (in order): a slow
 *   network or a slow server, not a stopped one (`mysql-slow`);
 * - `hold()`: nothing is passed on any more; what arrives is lost with the connections at the next
 *   `cutAll()` (a replication link that lags, then breaks when its master dies);
 * - `retarget(port)`: connections are cut and new ones go to `port` (clients moved to a promoted replica).
 */
export class DelayingProxy {
  private readonly server: Server;
  private readonly connections = new Set<Socket>();
  private delayMs = 0;
  private held = false;

  private constructor(
    private upstreamPort: number,
    private readonly upstreamHost: string,
  ) {
    this.server = createServer((client) => this.accept(client));
  }

  /** Listens on a free port of 127.0.0.1 (read it from `port`). */
  static async start(upstreamPort: number, upstreamHost = '127.0.0.1'): Promise<DelayingProxy> {
    const proxy = new DelayingProxy(upstreamPort, upstreamHost);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  get port(): number {
    const address = this.server.address();
    if (!address || typeof address === 'string') throw new Error('the proxy is not listening');
    return address.port;
  }

  get delay(): number {
    return this.delayMs;
  }

  setDelay(ms: number): void {
    this.delayMs = ms;
  }

  hold(): void {
    this.held = true;
  }

  retarget(upstreamPort: number): void {
    this.upstreamPort = upstreamPort;
    this.held = false;
    this.cutAll();
  }

  /** Cuts every connection; bytes held or delayed in flight are lost. */
  cutAll(): void {
    for (const socket of this.connections) socket.destroy();
    this.connections.clear();
  }

  async close(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const upstream = new Socket();
    this.connections.add(client);
    this.connections.add(upstream);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
      this.connections.delete(client);
      this.connections.delete(upstream);
    };
    for (const socket of [client, upstream]) {
      socket.on('error', closeBoth);
      socket.on('close', closeBoth);
    }
    client.pause();
    upstream.connect(this.upstreamPort, this.upstreamHost, () => client.resume());
    this.pipe(client, upstream);
    this.pipe(upstream, client);
  }

  /** Passes `from`'s chunks to `to`, each after the delay in force when it arrived, never out of order. */
  private pipe(from: Socket, to: Socket): void {
    let lastDue = 0;
    from.on('data', (chunk: Buffer) => {
      if (this.held) return;
      if (this.delayMs === 0 && lastDue <= Date.now()) {
        to.write(chunk);
        return;
      }
      const due = Math.max(Date.now() + this.delayMs, lastDue);
      lastDue = due;
      setTimeout(() => {
        if (!to.destroyed) to.write(chunk);
      }, due - Date.now());
    });
  }
}
