/**
 * Does a server answer at this URL? Raw-socket probes for Redis and MySQL (no client library: `npm
 * start` runs them before `npm install`), and an HTTP one for the apps.
 */
import { Buffer } from 'node:buffer';
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';

/** Sends PING (after AUTH when the URL has a password) over a raw socket and expects +PONG. */
export function redisAnswers(url, timeoutMs = 1_000) {
  return redisProbe(url, ['PING'], timeoutMs, (received) => (received.includes('+PONG') ? true : undefined));
}

/**
 * Whether the Redis at `url` keeps an append-only file ('aof') or not ('none'; snapshots at most), or
 * could not be asked (undefined). Without AOF a Redis crash loses the purchases not yet written to MySQL.
 */
export async function redisPersistence(url, timeoutMs = 1_000) {
  const verdict = await redisProbe(url, ['INFO', 'persistence'], timeoutMs, (received) => {
    if (received.includes('aof_enabled:1')) return 'aof';
    if (received.includes('aof_enabled:0')) return 'none';
    return undefined;
  });
  return verdict || undefined;
}

/** One Redis command (after AUTH when the URL has a password) over a raw socket; `decide` reads the reply. */
function redisProbe(url, command, timeoutMs, decide) {
  const parsed = new URL(url);
  const commands = [];
  if (parsed.password) {
    const auth = parsed.username ? ['AUTH', parsed.username, parsed.password] : ['AUTH', parsed.password];
    commands.push(auth.map(decodeURIComponent));
  }
  commands.push(command);
  // RESP arrays, so a password with spaces or quotes needs no escaping.
  const request = commands
    .map((args) => `*${args.length}\r\n` + args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join(''))
    .join('');
  const port = Number(parsed.port || 6379);
  const host = parsed.hostname || '127.0.0.1';
  const connect =
    parsed.protocol === 'rediss:'
      ? () => tls.connect({ host, port, servername: host })
      : () => net.connect({ host, port });
  return probe(
    connect,
    timeoutMs,
    (socket) => socket.write(request),
    (received) => {
      if (received.startsWith('-') || received.includes('\r\n-')) return false; // e.g. -NOAUTH, -WRONGPASS
      return decide(received);
    },
  );
}

/** Connects and waits for the server's greeting packet (protocol version 10) — enough to know it is up. */
export function mysqlAnswers(url, timeoutMs = 1_000) {
  const parsed = new URL(url);
  const port = Number(parsed.port || 3306);
  const host = parsed.hostname || '127.0.0.1';
  return probe(
    () => net.connect({ host, port }),
    timeoutMs,
    () => {},
    (_text, bytes) => {
      // 4-byte packet header, then the payload's first byte: 0x0a = handshake, 0xff = error (e.g. too many connections).
      if (bytes.length < 5) return undefined;
      return bytes[4] === 0x0a;
    },
  );
}

/** True when GET `url` answers 200 (an app's readiness); false while nothing listens yet. */
export async function httpAnswers(url) {
  try {
    return (await fetch(url)).status === 200;
  } catch {
    return false;
  }
}

/** One connection; `decide` sees everything received so far and returns true/false, or undefined to wait. */
function probe(connect, timeoutMs, onConnect, decide) {
  return new Promise((resolve) => {
    let settled = false;
    let bytes = Buffer.alloc(0);
    const socket = connect();
    const finish = (result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.once(socket instanceof tls.TLSSocket ? 'secureConnect' : 'connect', () => onConnect(socket));
    socket.on('data', (chunk) => {
      bytes = Buffer.concat([bytes, chunk]);
      const verdict = decide(bytes.toString('latin1'), bytes);
      if (verdict !== undefined) finish(verdict);
    });
    socket.on('error', () => finish(false));
    socket.on('close', () => finish(false));
  });
}

/**
 * The process id an API's liveness check (`/health`) names, over a connection of its own (node:cluster
 * hands each new connection to the next listening process); undefined when nothing answered.
 * @param {string} healthUrl
 * @param {number} [timeoutMs]
 * @returns {Promise<number | undefined>}
 */
export function answeringPid(healthUrl, timeoutMs = 2_000) {
  return new Promise((resolve) => {
    const request = http.get(healthUrl, { agent: false, timeout: timeoutMs }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => {
        try {
          resolve(response.statusCode === 200 ? JSON.parse(text).pid : undefined);
        } catch {
          resolve(undefined);
        }
      });
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(undefined));
  });
}
