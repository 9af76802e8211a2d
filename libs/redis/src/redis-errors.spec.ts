import { ReplyError } from 'ioredis';
import { MaxRetriesPerRequestError } from 'ioredis/built/errors';
import ClusterAllFailedError from 'ioredis/built/errors/ClusterAllFailedError';
import { CONNECTION_CLOSED_ERROR_MSG } from 'ioredis/built/utils';
import { RedisReplyLostError } from './redis-client';
import { isRedisUnavailable, redisReplyCode } from './redis-errors';

/** A Redis error reply as ioredis rejects a command with it. */
const reply = (text: string): Error => new (ReplyError as new (message: string) => Error)(text);

describe('redisReplyCode', () => {
  it("is an error reply's first word", () => {
    expect(redisReplyCode(reply('MOVED 3999 127.0.0.1:6381'))).toBe('MOVED');
    expect(redisReplyCode(reply('NOSCRIPT No matching script'))).toBe('NOSCRIPT');
  });

  it('is undefined for an error that is no reply of Redis', () => {
    expect(redisReplyCode(new Error('MOVED 3999 127.0.0.1:6381'))).toBeUndefined();
    expect(redisReplyCode('MOVED')).toBeUndefined();
  });
});

describe('isRedisUnavailable', () => {
  it.each([
    ['CLUSTERDOWN The cluster is down'],
    ['TRYAGAIN Multiple keys request during rehashing of slot'],
    ['MOVED 3999 127.0.0.1:6381'],
    ['ASK 3999 127.0.0.1:6381'],
    ['LOADING Redis is loading the dataset in memory'],
    ["READONLY You can't write against a read only replica."],
    ["MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."],
    ['NOREPLICAS Not enough good replicas to write.'],
  ])('a cluster failing over or a node not serving yet: %s', (text) => {
    expect(isRedisUnavailable(reply(text))).toBe(true);
  });

  it("ioredis's errors for a command that never reached Redis or lost its answer", () => {
    expect(isRedisUnavailable(new MaxRetriesPerRequestError(2))).toBe(true);
    expect(isRedisUnavailable(new ClusterAllFailedError(ClusterAllFailedError.defaultMessage, new Error()))).toBe(true);
    expect(isRedisUnavailable(new RedisReplyLostError())).toBe(true);
    expect(isRedisUnavailable(new Error(CONNECTION_CLOSED_ERROR_MSG))).toBe(true);
    expect(isRedisUnavailable(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toBe(true);
    expect(isRedisUnavailable(new Error('Too many Cluster redirections. Last error: MOVED 1 x:1'))).toBe(true);
    expect(isRedisUnavailable(new Error('None of startup nodes is available'))).toBe(true);
    expect(isRedisUnavailable(new Error("Cluster isn't ready and enableOfflineQueue options is false"))).toBe(true);
    expect(isRedisUnavailable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(true);
    // `commandTimeout` passed with no answer: a silent partition, the command's fate unknown.
    expect(isRedisUnavailable(new Error('Command timed out'))).toBe(true);
  });

  it('not an error reply that says the command itself was wrong, nor an error of other origin', () => {
    expect(isRedisUnavailable(reply('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe(false);
    expect(isRedisUnavailable(reply('NOSCRIPT No matching script'))).toBe(false);
    expect(isRedisUnavailable(new Error('CLUSTERDOWN said by someone else'))).toBe(false);
    expect(isRedisUnavailable(new Error('boom'))).toBe(false);
    expect(isRedisUnavailable(undefined)).toBe(false);
  });
});
