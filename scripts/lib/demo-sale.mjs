/** `npm start`'s demo data: one open sale on an empty database. Node built-ins only. */

/** Creates one sale on an empty database, so the first page a developer opens has something to buy. */
export async function seedDemoSale(apiUrl, adminPassword, log) {
  const sales = await request('GET', `${apiUrl}/sales`);
  if (sales.length > 0) return log(`${sales.length} sale(s) already exist; not seeding`);
  const { token } = await request('POST', `${apiUrl}/auth/admin`, { password: adminPassword });
  // No startsAt: the API's default, now — the first page a developer opens can buy at once.
  const sale = await request(
    'POST',
    `${apiUrl}/admin/sales`,
    {
      name: 'Demo flash sale — limited sneakers',
      description: 'A demo sale created by npm start: 100 pairs, one per customer, open from the start.',
      priceCents: 4999,
      stock: 100,
      perUserLimit: 1,
      endsAt: new Date(Date.now() + 2 * 3_600_000).toISOString(),
    },
    token,
  );
  log(`seeded demo sale ${sale.id} (${sale.status}, until ${sale.endsAt})`);
}

async function request(method, url, body, token) {
  const headers = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${new URL(url).pathname} answered ${response.status}: ${text}`);
  return JSON.parse(text);
}
