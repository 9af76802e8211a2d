import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';
import type { SaleLayout } from '@flash-sale/domain';
import { buyerBucket, onlyBucket, type SaleRedisRepository } from '@flash-sale/redis';

export interface PrivateRedisOptions {
  /** Keep an append-only file in this directory (fsync on every write), so a restart finds the data. */
  aofDir?: string;
  /** Start as a replica of the Redis on 127.0.0.1:`replicaOf`. */
  replicaOf?: number;
}

/** A throwaway redis-server on `port` (no persistence unless asked), for tests that stop Redis under the app. */
export function startPrivateRedis(port: number, options: PrivateRedisOptions = {}): ChildProcess {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', ''];
  if (options.aofDir) args.push('--appendonly', 'yes', '--appendfsync', 'always', '--dir', options.aofDir);
  else args.push('--appendonly', 'no');
  if (options.replicaOf) args.push('--replicaof', '127.0.0.1', String(options.replicaOf));
  return spawn('redis-server', args, { stdio: 'ignore' });
}

/** True when a Redis on 127.0.0.1:`port` answers PING. */
export function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1', () => {
      socket.write('PING\r\n');
      socket.once('data', (data) => {
        socket.destroy();
        resolve(data.toString().startsWith('+PONG'));
      });
    });
  });
}

/**
 * A submit token stored where the reservation script looks for it. Script-level tests need no signed
 * token (the API's SubmitTokens signs them; the script only checks the Redis copy).
 */
export async function issueTestToken(
  saleRedis: SaleRedisRepository,
  sale: string | SaleLayout,
  userId: string,
  ttlSeconds: number,
): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(18).toString('base64url');
  const bucket = typeof sale === 'string' ? onlyBucket(sale) : buyerBucket(sale, userId);
  await saleRedis.storeToken(bucket, token, userId, ttlSeconds);
  return { token, expiresAt: new Date(Date.now() + ttlSeconds * 1000) };
}
