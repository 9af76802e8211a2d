/**
 * The server's "now", so a countdown opens the Buy button when the server opens the sale and not when
 * a laptop's drifting clock says so. Each API answer's Date header (1 s resolution) gives a sample; the
 * offset is the median of recent samples taken at the midpoint of their round trips.
 */
class ServerClock {
  private readonly samples: number[] = [];
  private offsetMs = 0;

  observe(dateHeader: string | null, sentAt: number, receivedAt: number): void {
    const serverTime = dateHeader ? Date.parse(dateHeader) : NaN;
    if (Number.isNaN(serverTime)) return;
    // Date is truncated to the second: +500 ms is its expected value.
    this.samples.push(serverTime + 500 - (sentAt + receivedAt) / 2);
    if (this.samples.length > 15) this.samples.shift();
    const sorted = [...this.samples].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
    // Within a second the header cannot tell: trust the local clock then.
    this.offsetMs = Math.abs(median) < 1_000 ? 0 : median;
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }
}

export const serverClock = new ServerClock();
