import { DataSource } from 'typeorm';
import { sleep } from '../waiting-room/room-buyers';
import { useStackWorld } from '../support/stack-world';

interface Guest {
  token: string;
  userId: string;
}

/**
 * Refusals are cheap (docs/failure-model.md "Refusals are cheap"): after a sell-out, buyers who bought and
 * come back with new submit tokens are refused `410 SOLD_OUT` or `409 LIMIT_REACHED` — and no such answer
 * costs a MySQL query, whatever the buyer did before. What the API process asks MySQL is counted at its
 * DataSource (every query TypeORM sends goes through a query runner it makes).
 */
describe('refusals cost no MySQL query per request (real Redis and MariaDB)', () => {
  const w = useStackWorld({ database: true });
  let startedAt = 0;
  let queries = 0;

  beforeAll(() => {
    // Runs after the world's own beforeAll: the API is up and connected to Redis by now.
    startedAt = Date.now();
    const dataSource = w.stack.api.get(DataSource);
    const createQueryRunner = dataSource.createQueryRunner.bind(dataSource);
    dataSource.createQueryRunner = (mode) => {
      const runner = createQueryRunner(mode);
      const query = runner.query.bind(runner);
      runner.query = ((...args: Parameters<typeof query>) => {
        queries += 1;
        return query(...args);
      }) as typeof runner.query;
      return runner;
    };
  });

  const token = (saleId: string, guest: Guest) => w.client.submitToken(saleId, guest.token);
  const buy = (saleId: string, guest: Guest, submitToken: string) =>
    w.client.call<{ error?: { code: string } }>('POST', `/api/sales/${saleId}/purchase`, {
      token: guest.token,
      json: { token: submitToken },
    });

  it('SOLD_OUT and LIMIT_REACHED to buyers who bought, with fresh tokens: no MySQL query per refusal', async () => {
    // Tokens issued in the API's first seconds may predate the Redis copy it talks to (by the margin its
    // clock check allows): those are checked against MySQL. These buyers come later, as a crowd does.
    await sleep(Math.max(0, startedAt + 11_000 - Date.now()));
    const soldOut = await w.client.createSale(w.admin, { strategy: 'redis-lua', stock: 4, perUserLimit: 2 });
    const limited = await w.client.createSale(w.admin, { strategy: 'redis-lua', stock: 100, perUserLimit: 1 });
    const buyers = await w.client.guests(4, 4);
    for (const buyer of buyers) {
      expect((await buy(soldOut.id, buyer, await token(soldOut.id, buyer))).status).toBe(202);
      expect((await buy(limited.id, buyer, await token(limited.id, buyer))).status).toBe(202);
    }
    // Each comes back ten times, a new token each time (issued before the count: issuing one is not a refusal).
    const attempts: { saleId: string; guest: Guest; token: string }[] = [];
    for (let round = 0; round < 10; round++) {
      for (const buyer of buyers) {
        attempts.push({ saleId: soldOut.id, guest: buyer, token: await token(soldOut.id, buyer) });
        attempts.push({ saleId: limited.id, guest: buyer, token: await token(limited.id, buyer) });
      }
    }
    // The first SOLD_OUT teaches the process the sale is sold out (a reading in the background): let it.
    expect((await buy(soldOut.id, buyers[0]!, attempts[0]!.token)).status).toBe(410);
    await sleep(500);

    queries = 0;
    const refusingFrom = Date.now();
    const answers = [];
    for (const attempt of attempts.slice(1)) answers.push(await buy(attempt.saleId, attempt.guest, attempt.token));
    const refusals = answers.length;
    const whileRefusing = queries;
    const codes = new Set(answers.map((answer) => `${answer.status} ${answer.body.error?.code}`));
    expect([...codes].sort()).toEqual(['409 LIMIT_REACHED', '410 SOLD_OUT']);
    // Background readings (the sold-out flag's renewal) ask MySQL now and then, at a pace set by time, not
    // by requests: what the same process asks while idle for as long is taken off. A refusal never asks.
    queries = 0;
    await sleep(Date.now() - refusingFrom);
    const background = queries;
    expect((whileRefusing - background) / refusals).toBeLessThan(0.1);
  }, 60_000);
});
