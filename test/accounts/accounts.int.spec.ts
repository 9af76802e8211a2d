import type { ErrorBody, Session } from '@flash-sale/contract';
import { waitFor } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';
import { openDatabase } from '../support/test-env';

/** Accounts (docs/api.md "Auth"): register, sign in again anywhere and find one's orders; a guest keeps its id. */
describe('accounts (real API, worker, Redis, MariaDB)', () => {
  const w = useStackWorld();

  const register = (json: unknown, token?: string) =>
    w.stack.client.call<Session & ErrorBody>('POST', '/api/auth/register', { json, token });
  const login = (json: unknown) => w.stack.client.call<Session & ErrorBody>('POST', '/api/auth/login', { json });

  async function buyOne(token: string): Promise<string> {
    const sale = await w.stack.client.createSale(w.admin, { name: 'Account sale', priceCents: 250, stock: 3 });
    const bought = await w.stack.client.call<{ orderNo: string }>('POST', `/api/sales/${sale.id}/purchase`, {
      token,
      json: { token: await w.stack.client.submitToken(sale.id, token) },
    });
    expect(bought.status).toBe(202);
    return bought.body.orderNo;
  }

  it('registers, signs in again with the same name and password, and finds the same orders', async () => {
    const created = await register({ name: 'Ada Lovelace', password: 'analytical-engine' });
    expect(created.status).toBe(201);
    expect(created.body.user).toMatchObject({ name: 'Ada Lovelace', registered: true });
    const orderNo = await buyOne(created.body.token);

    const again = await login({ name: 'ada lovelace', password: 'analytical-engine' }); // names are case-insensitive
    expect(again.status).toBe(201);
    expect(again.body.user.id).toBe(created.body.user.id);
    const orders = await waitFor(
      'the order row',
      async () =>
        (
          await w.stack.client.call<{ orderNo: string; status: string }[]>('GET', '/api/orders', {
            token: again.body.token,
          })
        ).body,
      (list) => list.some((order) => order.orderNo === orderNo && order.status === 'PENDING_PAYMENT'),
      10_000,
    );
    expect(orders.map((order) => order.orderNo)).toEqual([orderNo]);

    // The password is stored as a salted scrypt hash, never as given.
    const db = await openDatabase(w.testEnv.config);
    const [row] = (await db.query('SELECT password_hash FROM users WHERE id = ?', [created.body.user.id])) as {
      password_hash: string;
    }[];
    await db.destroy();
    expect(row?.password_hash).toMatch(/^scrypt\$/);
    expect(row?.password_hash).not.toContain('analytical-engine');
  });

  it('a guest who registers keeps its id and its orders', async () => {
    const guest = await w.stack.client.guest('Grace');
    const orderNo = await buyOne(guest.token);
    const registered = await register({ name: 'Grace Hopper', password: 'cobol-forever' }, guest.token);
    expect(registered.status).toBe(201);
    expect(registered.body.user).toEqual({ id: guest.userId, name: 'Grace Hopper', registered: true });
    const signedIn = await login({ name: 'Grace Hopper', password: 'cobol-forever' });
    const order = await w.stack.client.call<{ orderNo: string }>('GET', `/api/orders/${orderNo}`, {
      token: signedIn.body.token,
    });
    expect(order.status).toBe(200);
    // Registering the same account twice is refused, not a second account for the same id.
    const twice = await register({ name: 'Grace H', password: 'cobol-forever' }, registered.body.token);
    expect([twice.status, twice.body.error.code]).toEqual([409, 'NAME_TAKEN']);
  });

  it('refuses a taken name, a wrong password, an unknown name and bad bodies with docs/api.md codes', async () => {
    expect((await register({ name: 'Linus', password: 'penguins-rule' })).status).toBe(201);
    const taken = await register({ name: 'LINUS', password: 'another-password' });
    expect([taken.status, taken.body.error.code]).toEqual([409, 'NAME_TAKEN']);
    const wrong = await login({ name: 'Linus', password: 'penguins-drool' });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    const unknown = await login({ name: 'Nobody', password: 'penguins-rule' });
    expect([unknown.status, unknown.body.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    expect(unknown.body.error.message).toBe(wrong.body.error.message); // no hint whether the name exists
    for (const body of [
      { name: 'Short', password: '1234567' },
      { name: '', password: 'long-enough-password' },
      { name: 'x'.repeat(65), password: 'long-enough-password' },
      { name: 'Extra', password: 'long-enough-password', role: 'admin' },
      { name: 'Pw', password: 'p'.repeat(129) },
    ]) {
      const refused = await register(body);
      expect([refused.status, refused.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    }
    const forged = await register({ name: 'Forger', password: 'long-enough-password' }, 'not-a-jwt');
    expect([forged.status, forged.body.error.code]).toEqual([401, 'UNAUTHENTICATED']);
  });
});
