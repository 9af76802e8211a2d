const clockTime = new Intl.DateTimeFormat('en-US', { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** "10:32:05 AM": a live dashboard moves by the second, which formatDateTime does not show. */
export function formatClockTime(at: string | number): string {
  return clockTime.format(new Date(at));
}

/** The same, as a machine-readable <time>. */
export function clockTimeElement(iso: string) {
  return <time dateTime={iso}>{formatClockTime(iso)}</time>;
}
