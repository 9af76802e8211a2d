/** Rounding and the short text forms the log lines and the report share. */

export function round(value, digits = 1) {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** value ÷ reference to 3 decimals; null when either is missing or zero. */
export function ratio(value, reference) {
  if (!value || !reference) return null;
  return round(value / reference, 3);
}

export function percent(fraction) {
  return fraction === null || fraction === undefined ? 'n/a' : `${Math.round(fraction * 100)} %`;
}

export function thousands(value) {
  return value === null || value === undefined ? 'n/a' : Math.round(value).toLocaleString('en-US');
}

/** A ratio as a multiple: 1.5 → "1.50×". */
export function times(value) {
  return value === null || value === undefined ? 'n/a' : `${value.toFixed(2)}×`;
}

export function formatCpu(cpu) {
  return Object.entries(cpu)
    .map(([name, value]) => `${name} ${value}%`)
    .join(', ');
}

/** `unit`: what the counts are divided by (responses; orders for the drain). */
export function formatRedis(redis, unit = 'response') {
  const short = unit === 'response' ? 'resp' : unit;
  const top = redis.top.map((row) => `${row.command} ${row.percent}% (${row.callsPerResponse}/${short})`).join(', ');
  return `${redis.usecPerResponse} µs of command time per ${unit}; ${top}`;
}

export function formatIdleRedis(idle) {
  const top = idle.redisTop.map((row) => `${row.command} ${row.perSecond}/s`).join(', ');
  return (
    `${idle.redisCommandsPerSecond} commands/s, ${idle.redisCommandMsPerSecond} ms of command time/s (server-wide); ` +
    `most time: ${top}`
  );
}
