import { createServer, type Server, Socket } from 'node:net';

/**
 * A TCP proxy in front of a Redis that can lose a reply: the command reaches Redis and runs, but the
 * connection to the client is cut before the reply arrives — what a timeout or a dropped connection
 * after sending looks like to the client, whose outcome is uncertain.
 *
 * While its Redis is down the proxy must not accept connections (`stop`/`listen` again): a client
 * that connects, even only to the proxy, counts as reconnected and would keep its commands queued.
 */
export class ReplyDroppingProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private dropReplyWhen: ((reply: Buffer) => boolean) | undefined;
  /** Replies dropped so far. */
  dropped = 0;

  constructor(private readonly upstreamPort: number) {
    this.server = createServer((client) => this.connect(client));
  }

  listen(port: number): Promise<void> {
    return new Promise((resolve) => this.server.listen(port, '127.0.0.1', resolve));
  }

  /** Stops accepting connections and cuts the open ones, as a stopped Redis would. */
  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** The next reply that matches is not delivered: the client's connection is destroyed instead. */
  dropNextReply(matches: (reply: Buffer) => boolean): void {
    this.dropReplyWhen = matches;
  }

  async close(): Promise<void> {
    if (this.server.listening) await this.stop();
  }

  private connect(client: Socket): void {
    const upstream = new Socket();
    this.sockets.add(client).add(upstream);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', closeBoth).on('close', closeBoth);
    upstream.on('error', closeBoth).on('close', closeBoth);
    upstream.connect(this.upstreamPort, '127.0.0.1');
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (this.dropReplyWhen?.(chunk)) {
        this.dropReplyWhen = undefined;
        this.dropped += 1;
        closeBoth();
        return;
      }
      client.write(chunk);
    });
  }
}
