/**
 * How long the load generator's connections took to open, and whether the kernel dropped any of their
 * handshakes. A server-side percentile starts at the request, so it cannot show a connection that
 * waited a second for a SYN to be sent again (a full accept queue, or a SYN queue under pressure): this
 * times every TCP connect the load generator makes to the target (Node's `net.client.socket`
 * diagnostics channel, so autocannon needs no change) and reads the kernel's listen-queue counters
 * around the run.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { latencySummary } from './sampling.mjs';

/** Kernel TCP counters that say a handshake was dropped or had to be sent again (machine-wide). */
const KERNEL_COUNTERS = {
  listenOverflows: ['TcpExt', 'ListenOverflows'], // a connection found its accept queue full
  listenDrops: ['TcpExt', 'ListenDrops'], // a SYN or handshake dropped at a listening socket
  synRetransmits: ['TcpExt', 'TCPSynRetrans'], // SYNs sent again by a connecting client
};

/** Starts timing connects to `port` on this process's sockets; `stop()` gives the summary. */
export function watchConnects(port) {
  const connectMs = [];
  const onSocket = ({ socket }) => {
    const startedAt = performance.now();
    socket.once('connect', () => {
      if (socket.remotePort === port) connectMs.push(performance.now() - startedAt);
    });
  };
  const kernelBefore = readKernelCounters();
  subscribe('net.client.socket', onSocket);
  return {
    stop() {
      unsubscribe('net.client.socket', onSocket);
      const kernelAfter = readKernelCounters();
      const kernel = {};
      for (const name of Object.keys(KERNEL_COUNTERS)) {
        kernel[name] = kernelBefore && kernelAfter ? kernelAfter[name] - kernelBefore[name] : null;
      }
      return { connections: connectMs.length, ...latencySummary(connectMs), kernel };
    },
  };
}

/** The counters of KERNEL_COUNTERS from /proc/net/netstat, or undefined where there is no such file. */
function readKernelCounters() {
  let text;
  try {
    text = readFileSync('/proc/net/netstat', 'utf8');
  } catch {
    return undefined;
  }
  // Pairs of lines: "TcpExt: Name1 Name2 …" then "TcpExt: 1 2 …".
  const lines = text.trim().split('\n');
  const values = {};
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const names = lines[i].split(/\s+/);
    const numbers = lines[i + 1].split(/\s+/);
    const group = names[0].replace(':', '');
    names.slice(1).forEach((name, j) => (values[`${group}.${name}`] = Number(numbers[j + 1])));
  }
  const counters = {};
  for (const [name, [group, field]] of Object.entries(KERNEL_COUNTERS))
    counters[name] = values[`${group}.${field}`] ?? 0;
  return counters;
}
