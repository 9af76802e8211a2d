/** MySQL/MariaDB error 1062: a unique index refused the row. */
export function isDuplicateKeyError(error: unknown): boolean {
  const candidate = error as { code?: string; errno?: number; driverError?: { code?: string } } | null;
  return (
    candidate?.code === 'ER_DUP_ENTRY' || candidate?.errno === 1062 || candidate?.driverError?.code === 'ER_DUP_ENTRY'
  );
}
