import { Agent, request } from 'node:http';

export interface SelfResponse<T = unknown> {
  status: number;
  body: T;
  /** Wall time of the request, ms. */
  ms: number;
  /** The `retry-after` header's seconds, when the answer carries one. */
  retryAfterSeconds?: number;
}

/**
 * HTTP to this very API over loopback: the demonstration and the startup warm-up buy through the public
 * routes, exactly as a shopper would, so they go through what the API really does (validation, guards,
 * strategies, audit). A keep-alive pool of `connections` sockets bounds what a burst can open.
 */
export class SelfHttpClient {
  private readonly agent: Agent;

  constructor(
    private readonly port: number,
    connections: number,
    private readonly timeoutMs = 10_000,
    /** The address the server listens on (a loopback one when it listens on every interface). */
    private readonly host = '127.0.0.1',
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: connections });
  }

  call<T = unknown>(
    method: 'GET' | 'POST' | 'PATCH',
    path: string,
    token: string,
    json?: unknown,
  ): Promise<SelfResponse<T>> {
    const payload = json === undefined ? undefined : Buffer.from(JSON.stringify(json));
    const started = performance.now();
    return new Promise((resolve) => {
      const req = request(
        {
          host: this.host,
          port: this.port,
          method,
          path: `/api${path}`,
          agent: this.agent,
          timeout: this.timeoutMs,
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'application/json',
            ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: unknown = text;
            try {
              body = text ? JSON.parse(text) : undefined;
            } catch {
              // not JSON: keep the text
            }
            const retryAfter = Number(res.headers['retry-after']);
            resolve({
              status: res.statusCode ?? 0,
              body: body as T,
              ms: performance.now() - started,
              ...(res.headers['retry-after'] !== undefined && Number.isFinite(retryAfter)
                ? { retryAfterSeconds: retryAfter }
                : {}),
            });
          });
          res.on('error', () => resolve({ status: 0, body: undefined as T, ms: performance.now() - started }));
        },
      );
      // A request that fails or times out is counted as an error by the caller (status 0), never thrown.
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => resolve({ status: 0, body: undefined as T, ms: performance.now() - started }));
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Runs `task` over `items` with at most `concurrency` in flight. */
export async function pool<T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  });
  await Promise.all(lanes);
}
