/**
 * What a MySQL/MariaDB failure means to its caller, read from the driver's error code (mysql2 sets
 * `code`; TypeORM's QueryFailedError keeps the driver's error as `driverError`), never from its text.
 */
export type MySqlErrorKind =
  /** A unique index refused the row (error 1062). */
  | 'duplicate-key'
  /** The transaction lost a lock race (deadlock, lock wait timeout): running it again may succeed. */
  | 'transaction-conflict'
  /** The server could not be reached or dropped the connection: nothing says the input was wrong. */
  | 'unavailable';

const KIND_OF_CODE: Readonly<Record<string, MySqlErrorKind>> = {
  ER_DUP_ENTRY: 'duplicate-key',
  ER_LOCK_DEADLOCK: 'transaction-conflict',
  ER_LOCK_WAIT_TIMEOUT: 'transaction-conflict',
  PROTOCOL_CONNECTION_LOST: 'unavailable',
  ER_CON_COUNT_ERROR: 'unavailable',
  // The socket's own failures, which mysql2 reports under Node's code.
  ECONNREFUSED: 'unavailable',
  ECONNRESET: 'unavailable',
  ETIMEDOUT: 'unavailable',
  EPIPE: 'unavailable',
};

const ER_DUP_ENTRY_ERRNO = 1062;

interface MySqlDriverError {
  code?: unknown;
  errno?: unknown;
  driverError?: { code?: unknown } | null;
}

/** The kind of a MySQL failure; undefined for any other error (or a MySQL error of no kind above). */
export function mysqlErrorKind(error: unknown): MySqlErrorKind | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, errno, driverError } = error as MySqlDriverError;
  const kind = kindOfCode(driverError?.code) ?? kindOfCode(code);
  if (kind) return kind;
  return errno === ER_DUP_ENTRY_ERRNO ? 'duplicate-key' : undefined;
}

function kindOfCode(code: unknown): MySqlErrorKind | undefined {
  return typeof code === 'string' && Object.hasOwn(KIND_OF_CODE, code) ? KIND_OF_CODE[code] : undefined;
}

export function isDuplicateKeyError(error: unknown): boolean {
  return mysqlErrorKind(error) === 'duplicate-key';
}

export function isMySqlUnavailable(error: unknown): boolean {
  return mysqlErrorKind(error) === 'unavailable';
}
