import { formatShortDateTime, formatShortEnd, formatWait } from './format';

// Local times, as the browser shows them: the tests hold in any time zone.
const local = (year: number, month: number, day: number, hours: number, minutes = 0) =>
  new Date(year, month - 1, day, hours, minutes).toISOString();
const inMid2030 = Date.parse(local(2030, 6, 1, 12));

describe('dates for a table cell', () => {
  it('leaves out the year when it is this year, and says it when it is not', () => {
    expect(formatShortDateTime(local(2030, 1, 15, 10), inMid2030)).toBe('Jan 15, 10:00 AM');
    expect(formatShortDateTime(local(2031, 1, 15, 15, 5), inMid2030)).toBe('Jan 15, 2031, 3:05 PM');
  });

  it("gives only the time of an end on the start's day, the date too on another day", () => {
    expect(formatShortEnd(local(2030, 1, 15, 10), local(2030, 1, 15, 12), inMid2030)).toBe('12:00 PM');
    expect(formatShortEnd(local(2030, 1, 15, 22), local(2030, 1, 16, 2), inMid2030)).toBe('Jan 16, 2:00 AM');
  });
});

describe('an estimated wait', () => {
  it('is said in whole minutes, and under a minute as such', () => {
    expect(formatWait(0)).toBe('less than a minute');
    expect(formatWait(59)).toBe('less than a minute');
    expect(formatWait(150)).toBe('about 3 minutes');
    expect(formatWait(61)).toBe('about 1 minute');
    expect(formatWait(4_000)).toBe('about 1 hour 7 minutes');
  });
});
