/**
 * (g) The waiting room: a crowd joins a room sale, then polls its tickets for the run's duration. A poll
 * should cost about what a sold-out answer costs (the flood after a sell-out is the other crowd that
 * keeps asking): the report puts the machine CPU per poll beside the sold-out answer's.
 *
 * The room admits one buyer a second, so nearly everyone stays waiting and every poll is a real one
 * (position, ETA, advice). Each buyer is polled again every BENCH_USERS / req/s seconds: sooner than
 * half the advice is a `429` from the same script call, which is a poll's answer too and counted as one.
 */
import { SETTINGS, log } from '../settings.mjs';

export async function runRoomPolls(run) {
  const sale = await run.sales.create('bench waiting room', 1_000_000, 'redis-lua', {
    waitingRoom: { admitPerSecond: 1 },
  });
  const buyers = Math.min(SETTINGS.users, 20_000);
  log(`preparing ${buyers} buyers for the waiting room`);
  const pairs = await run.buyers.preparePairs(sale.id, buyers, { storeInRedis: false });
  const path = `/api/sales/${sale.id}/queue`;
  const joins = await run.load({
    key: 'roomJoin',
    label: 'waiting room: join (201)',
    saleId: sale.id,
    pairs,
    expect: 201,
    amount: buyers,
    path,
  });
  run.answeredAsExpected('waiting room: every join 201', joins);
  const polls = await run.load({
    key: 'roomPoll',
    label: 'waiting room: poll (200, or 429 sooner than its advice)',
    saleId: sale.id,
    pairs,
    expect: [200, 429],
    durationS: SETTINGS.durationS,
    method: 'GET',
    path,
  });
  run.answeredAsExpected('waiting room: every poll 200 or 429', polls);
  run.results.scenarios.push(joins, polls);
}
