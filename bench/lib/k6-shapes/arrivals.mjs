/**
 * Open arrivals, like k6's arrival-rate executors: a buyer arrives on schedule whatever the API answered
 * before.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** A k6 duration (`90s`, `5m`, `1h30m`) in seconds. */
export function durationSeconds(text) {
  const [, h = 0, m = 0, sec = 0] = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text) ?? [];
  return Number(h) * 3600 + Number(m) * 60 + Number(sec);
}

/** Arrival instants (ms from the start) of a spike, as k6's ramping-arrival-rate spaces them. */
export function arrivals(shape) {
  const stages = [
    [shape.rampUpS, 0, shape.peakRate],
    [shape.holdS, shape.peakRate, shape.peakRate],
    [shape.rampDownS, shape.peakRate, 0],
  ];
  const times = [];
  let t = 0;
  let due = 0;
  const step = 0.005;
  for (const [duration, from, to] of stages) {
    for (let s = 0; s < duration; s += step) {
      due += (from + ((to - from) * s) / duration) * step;
      while (due >= 1) {
        times.push((t + s) * 1000);
        due -= 1;
      }
    }
    t += duration;
  }
  return times;
}

/** Runs `buyer(i)` at each arrival instant without waiting for the ones before; resolves when all ended. */
export async function runArrivals(times, buyer) {
  const started = performance.now();
  const running = [];
  for (let i = 0; i < times.length; i++) {
    const wait = times[i] - (performance.now() - started);
    if (wait > 1) await sleep(wait);
    running.push(buyer(i));
  }
  await Promise.all(running);
  return (performance.now() - started) / 1000;
}
