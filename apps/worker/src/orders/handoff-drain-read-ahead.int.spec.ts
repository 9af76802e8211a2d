import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const BUILT_DRAIN = join(__dirname, '..', '..', 'dist', 'orders', 'handoff-drain.js');

/**
 * The drain, as the built worker runs it, in a Node process of its own: Node ends a process on an
 * unhandled rejection, which Jest forgives once the promise is handled later. The stream's next batch is
 * read while the current one is written to MySQL; Redis failing over rejects that read at once, long
 * before the write ends and the read is awaited.
 */
const SCENARIO = `
const { loadConfig } = require('@flash-sale/config');
const { HandoffDrain } = require(${JSON.stringify(BUILT_DRAIN)});
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const failingOver = new Error('Too many Cluster redirections. Last error: ReplyError: CLUSTERDOWN The cluster is down');
const entry = (id) => ({ id, order: { orderNo: 'FS' + id } });
let reads = 0;
const written = [];
const acknowledged = [];
const stream = {
  readNew: async () => (++reads === 1 ? [entry('1-0'), entry('1-1')] : Promise.reject(failingOver)),
  acknowledge: async (bucket, ids) => void acknowledged.push(ids),
  claimIdle: async () => ({ entries: [], cursor: '0-0' }),
};
const writer = {
  writeBatch: async (saleId, orders) => {
    await sleep(100);
    written.push(orders.map((order) => order.orderNo));
    return orders.map(() => 'created');
  },
};
const drain = new HandoffDrain(stream, writer, {}, { touch: async () => undefined }, { observeCreated: () => undefined },
  loadConfig({ ORDER_BATCH_SIZE: '2' }));
drain.drain({ id: '7', buckets: 1 }).then(
  () => console.log(JSON.stringify({ drained: 'ok' })),
  async (error) => {
    await sleep(50);
    console.log(JSON.stringify({ failedWith: error.message, written, acknowledged }));
  },
);
`;

describe('HandoffDrain, read ahead', () => {
  beforeAll(() => {
    if (!existsSync(BUILT_DRAIN)) throw new Error(`${BUILT_DRAIN} is missing: build first (npm test does)`);
  });

  it('a read that fails while the batch before it is still being written fails the drain, not the process', () => {
    const run = spawnSync(process.execPath, ['-e', SCENARIO], { encoding: 'utf8', timeout: 20_000 });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toEqual({
      failedWith: expect.stringContaining('CLUSTERDOWN'),
      // The batch in hand was written and acknowledged before the failure was raised.
      written: [['FS1-0', 'FS1-1']],
      acknowledged: [['1-0', '1-1']],
    });
  });
});
