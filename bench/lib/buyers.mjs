/**
 * Buyers, prepared before each run so that the load generator does no crypto while measuring: every
 * request is a distinct (guest JWT, submit token) pair, so the API does the full purchase work each time.
 */
import { Buffer } from 'node:buffer';
import { createSecretKey } from 'node:crypto';
import { require, requireBuilt } from './app-dist.mjs';
import { JWT_SECRET, REDIS_KEY_PREFIX, RUN_ID, TOKEN_TTL_S } from './settings.mjs';
import { state } from './stack.mjs';

const PIPELINE_SIZE = 10_000;

/** Call after ensureBuilt(): it loads the built app. */
export function buyerFactory() {
  const jwt = require('jsonwebtoken');
  const { buyerBucket, KeyBuilder, SaleState } = require('@flash-sale/redis');
  // The API's own submit-token format and key derivation: a token the bench makes is one the API issues.
  const { SubmitTokenCodec } = requireBuilt('submitTokenCodec');
  const codec = new SubmitTokenCodec(JWT_SECRET);
  const keys = new KeyBuilder(REDIS_KEY_PREFIX);
  // The API signs its JWTs inside Nest's JwtModule, with nothing to reuse outside it: the same claims
  // and algorithm here, with jsonwebtoken like the API. A KeyObject secret, because jsonwebtoken 9 first
  // tries to parse a string secret as a PEM public key, and that failed parse would dominate the time
  // spent preparing buyers (bench/README.md).
  const jwtKey = createSecretKey(Buffer.from(JWT_SECRET));
  const guestJwt = (userId, name) =>
    jwt.sign({ sub: userId, name, role: 'guest' }, jwtKey, { algorithm: 'HS256', expiresIn: 3600 });
  let pairSets = 0;

  /**
   * `count` (guest JWT, submit token) pairs for one sale. For a redis-lua sale (and the ceiling) the
   * tokens are also written straight into Redis, where the reservation script looks for them; the
   * MySQL-only strategies check only the signature. `redis`: another Redis than the run's main one
   * (the scale section's cluster), where the tokens are stored through the app's own
   * `SaleState.storeToken`, in each buyer's bucket of a sale spread over `buckets`. `userIds`:
   * the buyers, taking turns, instead of new ones (buyers who come back, each time with a new token).
   */
  async function preparePairs(saleId, count, { storeInRedis = true, redis, buckets = 1, userIds } = {}) {
    const pairs = { count, auth: new Array(count), body: new Array(count), user: new Array(count) };
    const batch = {
      tag: `${RUN_ID}s${pairSets++}`,
      saleId: String(saleId),
      expiresAtMs: Date.now() + TOKEN_TTL_S * 1000,
      saleKeys: keys.sale(String(saleId)),
      storeInRedis,
      repository: redis && new SaleState(redis, keys),
      layout: { id: String(saleId), buckets },
      userIds,
    };
    for (let start = 0; start < count; start += PIPELINE_SIZE) {
      // Cleanup may have started (Ctrl-C): writing keys now would outlive its scan.
      if (state.cleaning) throw new Error('interrupted');
      await prepareSlice(pairs, batch, start, Math.min(count, start + PIPELINE_SIZE));
    }
    return pairs;
  }

  async function prepareSlice(pairs, batch, start, end) {
    const { tag, saleId, expiresAtMs, saleKeys, storeInRedis, repository, layout, userIds } = batch;
    const pipeline = storeInRedis && !repository ? state.redis.pipeline() : undefined;
    const stored = [];
    for (let i = start; i < end; i++) {
      const userId = userIds ? userIds[i % userIds.length] : `b${tag}u${i}`; // within the API's user-id alphabet [A-Za-z0-9_-]
      const token = codec.encode(SubmitTokenCodec.claims(saleId, userId, expiresAtMs));
      pairs.user[i] = userId;
      pairs.auth[i] = `Bearer ${guestJwt(userId, `Bench ${i}`)}`;
      pairs.body[i] = JSON.stringify({ token });
      pipeline?.set(saleKeys.token(token), userId, 'EX', TOKEN_TTL_S);
      // Sent at once, not awaited one by one: the client pipelines them on its connections.
      if (storeInRedis && repository) {
        stored.push(repository.storeToken(buyerBucket(layout, userId), token, userId, TOKEN_TTL_S));
      }
    }
    await Promise.all(stored);
    if (!pipeline) return;
    const failed = (await pipeline.exec()).find(([error]) => error);
    if (failed) throw failed[0];
  }

  /**
   * The codec is the API's own, so only its key can differ from the API's: it is derived from the
   * JWT_SECRET the bench hands the API, which the API's config may read differently. A wrong key would
   * show only as 403s minutes into the run; one token issued by the API and verified here shows it
   * before any load (and that the API accepts the bench's guest JWTs).
   */
  async function checkSameSigningKey(http, saleId) {
    const userId = `b${RUN_ID}probe`;
    const authorization = `Bearer ${guestJwt(userId, 'probe')}`;
    const issued = await http.raw('POST', `/api/sales/${saleId}/tokens`, undefined, authorization, 201);
    if (!codec.verify(String(issued?.token), String(saleId), userId)) {
      throw new Error(
        `POST /api/sales/${saleId}/tokens issued ${JSON.stringify(issued)}, which does not verify with the key ` +
          'the bench derives from JWT_SECRET: the API signs submit tokens with another secret',
      );
    }
  }

  return { preparePairs, checkSameSigningKey };
}
