import { existsSync } from 'node:fs';

/** Debian's libfaketime (`apt-get install faketime`); LIBFAKETIME_PATH points at another build. */
const LIBFAKETIME = process.env['LIBFAKETIME_PATH'] ?? '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';

/**
 * The environment that runs a process `offsetSeconds` ahead of (or behind) the machine's clock, as an
 * unsynchronised host does: libfaketime, preloaded, moves what the process reads of the wall clock.
 * The monotonic clock is left alone (NTP does not move it either), so timers and intervals still
 * run at the right pace. Nothing in the app knows.
 */
export function skewedClockEnv(offsetSeconds: number): Record<string, string> {
  if (!existsSync(LIBFAKETIME)) {
    throw new Error(
      `clock-skew needs libfaketime at ${LIBFAKETIME}: apt-get install faketime (or set LIBFAKETIME_PATH)`,
    );
  }
  return {
    LD_PRELOAD: LIBFAKETIME,
    FAKETIME: `${offsetSeconds >= 0 ? '+' : ''}${offsetSeconds}s`,
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
}
