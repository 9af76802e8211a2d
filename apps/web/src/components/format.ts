const money = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const dateTime = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short' });

/** Money is integer cents in the API. */
export function formatMoney(cents: number): string {
  return money.format(cents / 100);
}

export function formatDateTime(iso: string): string {
  return dateTime.format(new Date(iso));
}

const monthDay = { month: 'short', day: 'numeric' } as const;
const shortTime = { hour: 'numeric', minute: '2-digit' } as const;
const sameYearDateTime = new Intl.DateTimeFormat('en-US', { ...monthDay, ...shortTime });
const otherYearDateTime = new Intl.DateTimeFormat('en-US', { ...monthDay, year: 'numeric', ...shortTime });
const timeOnly = new Intl.DateTimeFormat('en-US', shortTime);

/**
 * "Nov 27, 3:36 PM": a date and time for a table cell, the year only when it is not this year's
 * ("Jan 15, 2031, 10:00 AM"). `now` is the moment "this year" is taken from.
 */
export function formatShortDateTime(iso: string, now = Date.now()): string {
  const at = new Date(iso);
  const format = at.getFullYear() === new Date(now).getFullYear() ? sameYearDateTime : otherYearDateTime;
  return format.format(at);
}

/** The end of a span that started at `startIso`, for a table cell: "4:36 PM" when it ends the same day. */
export function formatShortEnd(startIso: string, endIso: string, now = Date.now()): string {
  const start = new Date(startIso);
  const end = new Date(endIso);
  return start.toDateString() === end.toDateString() ? timeOnly.format(end) : formatShortDateTime(endIso, now);
}

/** 3725 s → "1:02:05", 65 s → "1:05"; days are spelled out ("2d 03:00:00"). */
export function formatDuration(totalSeconds: number): string {
  const seconds = Math.max(0, Math.floor(totalSeconds));
  const days = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3_600);
  const m = Math.floor((seconds % 3_600) / 60);
  const s = seconds % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  if (days > 0) return `${days}d ${pad(h)}:${pad(m)}:${pad(s)}`;
  if (h > 0) return `${h}:${pad(m)}:${pad(s)}`;
  return `${m}:${pad(s)}`;
}

/** A span of time in words for a sentence: 10 → "10 seconds", 90 → "1 minute 30 seconds", 600 → "10 minutes". */
export function formatSpan(totalSeconds: number): string {
  const seconds = Math.max(0, Math.round(totalSeconds));
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (seconds < 60) return plural(seconds, 'second');
  const hours = Math.floor(seconds / 3_600);
  const minutes = Math.floor((seconds % 3_600) / 60);
  const rest = seconds % 60;
  const parts = [
    hours ? plural(hours, 'hour') : '',
    minutes ? plural(minutes, 'minute') : '',
    rest ? plural(rest, 'second') : '',
  ];
  return parts.filter(Boolean).join(' ');
}

/**
 * An estimated wait for a sentence, as rough as an estimate is: 40 → "less than a minute", 150 →
 * "about 3 minutes", 4000 → "about 1 hour 7 minutes".
 */
export function formatWait(totalSeconds: number): string {
  if (totalSeconds < 60) return 'less than a minute';
  return `about ${formatSpan(Math.round(totalSeconds / 60) * 60)}`;
}
