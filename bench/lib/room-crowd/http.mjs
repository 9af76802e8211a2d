/**
 * The API as the room crowd calls it, over undici with kept-alive connections: a pool for the crowd's
 * joins and polls, one of its own for tokens and purchases and one for the admin, so that neither a
 * buyer's purchase nor the once-a-second sample of the room waits behind thousands of polls in a
 * client-side queue (their latency is the API's).
 */
import { Agent, request } from 'undici';

export function crowdHttp(baseUrl, { connections, buyConnections, readAnswer }) {
  const crowd = new Agent({ connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const buying = new Agent({ connections: buyConnections, pipelining: 1, keepAliveTimeout: 30_000 });
  const admin = new Agent({ connections: 4, pipelining: 1, keepAliveTimeout: 30_000 });

  /**
   * One request as lib/room-buyer.ts's Answer, read by `readAnswer` (lib/room-answers.ts, as the k6 crowd
   * reads its own): status, parsed body, retry-after, and when it left and was answered (epoch ms). A
   * failure to connect is status 0.
   */
  async function call(method, path, { token, json, pool = 'crowd' } = {}) {
    const headers = {};
    if (json !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    const sentAt = Date.now();
    try {
      const answer = await request(`${baseUrl}${path}`, {
        method,
        headers,
        body: json === undefined ? undefined : JSON.stringify(json),
        dispatcher: { crowd, buying, admin }[pool],
        headersTimeout: 60_000,
        bodyTimeout: 60_000,
      });
      const text = await answer.body.text();
      return readAnswer({
        status: answer.statusCode,
        text,
        retryAfter: answer.headers['retry-after'],
        sentAt,
        answeredAt: Date.now(),
      });
    } catch (error) {
      return {
        status: 0,
        body: { error: { code: 'NETWORK', message: String(error?.message ?? error) } },
        sentAt,
        answeredAt: Date.now(),
      };
    }
  }

  /** A call that must answer `status`; its body. */
  async function must(method, path, status, options) {
    const answer = await call(method, path, options);
    if (answer.status !== status) {
      throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    }
    return answer.body;
  }

  return { call, must, close: () => Promise.all([crowd.close(), buying.close(), admin.close()]) };
}
