import { QueryFailedError } from 'typeorm';
import { isDuplicateKeyError, isMySqlUnavailable, mysqlErrorKind } from './mysql-errors';

/** An error as mysql2 raises it: Node's or MySQL's code, and MySQL's errno when the server answered. */
function driverError(code: string, errno?: number): Error {
  return Object.assign(new Error(`${code}: from the driver`), { code, errno });
}

describe('mysqlErrorKind', () => {
  it.each([
    ['ER_DUP_ENTRY', 'duplicate-key'],
    ['ER_LOCK_DEADLOCK', 'transaction-conflict'],
    ['ER_LOCK_WAIT_TIMEOUT', 'transaction-conflict'],
    ['PROTOCOL_CONNECTION_LOST', 'unavailable'],
    ['ER_CON_COUNT_ERROR', 'unavailable'],
    ['ECONNREFUSED', 'unavailable'],
    ['ECONNRESET', 'unavailable'],
    ['ETIMEDOUT', 'unavailable'],
    ['EPIPE', 'unavailable'],
  ])('%s is %s, from mysql2 or wrapped in a TypeORM QueryFailedError', (code, kind) => {
    expect(mysqlErrorKind(driverError(code))).toBe(kind);
    expect(mysqlErrorKind(new QueryFailedError('SELECT 1', [], driverError(code)))).toBe(kind);
  });

  it('reads a duplicate key from its errno too', () => {
    expect(mysqlErrorKind(Object.assign(new Error('Duplicate entry'), { errno: 1062 }))).toBe('duplicate-key');
  });

  it('gives no kind to other MySQL errors, to errors of other origins, or to what is not an object', () => {
    expect(mysqlErrorKind(driverError('ER_PARSE_ERROR', 1064))).toBeUndefined();
    expect(mysqlErrorKind(driverError('toString'))).toBeUndefined();
    // The message is not read: only the code says what happened.
    expect(mysqlErrorKind(new Error('ER_DUP_ENTRY ECONNREFUSED'))).toBeUndefined();
    expect(mysqlErrorKind(undefined)).toBeUndefined();
    expect(mysqlErrorKind('ECONNREFUSED')).toBeUndefined();
  });

  it('isDuplicateKeyError and isMySqlUnavailable ask for one kind each', () => {
    expect(isDuplicateKeyError(driverError('ER_DUP_ENTRY', 1062))).toBe(true);
    expect(isDuplicateKeyError(driverError('ECONNREFUSED'))).toBe(false);
    expect(isMySqlUnavailable(driverError('ECONNREFUSED'))).toBe(true);
    expect(isMySqlUnavailable(driverError('ER_LOCK_DEADLOCK'))).toBe(false);
  });
});
