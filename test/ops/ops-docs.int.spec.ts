import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useStackWorld } from '../support/stack-world';

interface OpenApiDocument {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      { tags?: string[]; security?: unknown[]; requestBody?: unknown; responses?: Record<string, unknown> }
    >
  >;
  components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
  tags: { name: string }[];
}

const API_DOC = readFileSync(join(__dirname, '..', '..', 'docs', 'api.md'), 'utf8');

/** `/api/sales/:id` as OpenAPI writes it: `/api/sales/{id}`. */
const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

/**
 * The routes of docs/api.md's tables (`METHOD /path` in the first column), each with the 2xx statuses
 * its last column names (a status opens a code span: `202 …`, `201`).
 */
function documentedRoutes(): Map<string, string[]> {
  const routes = new Map<string, string[]>();
  for (const line of API_DOC.split('\n')) {
    const row = /^\|\s*`(GET|POST|PUT|PATCH|DELETE) (\/[^`\s]*)`\s*\|(.*)\|\s*$/.exec(line);
    if (!row) continue;
    const success = row[3]!.split('|').pop()!;
    routes.set(
      `${row[1]} ${openApiPath(row[2]!)}`,
      [...success.matchAll(/`(2\d\d)\b/g)].map((match) => match[1]!).sort(),
    );
  }
  return routes;
}

/** The `GET /path` routes of docs/api.md's "Operations" paragraph (health, metrics, docs). */
function documentedOperations(): string[] {
  const start = API_DOC.indexOf('## Operations');
  const section = API_DOC.slice(start, API_DOC.indexOf('\n## ', start + 1));
  return [...section.matchAll(/`GET (\/[^`\s]*)`/g)].map((match) => `GET ${match[1]}`);
}

describe('OpenAPI at /docs (real app)', () => {
  const w = useStackWorld({ worker: false });

  it('lists the same routes as docs/api.md, with the same success statuses', async () => {
    const { paths } = (await w.stack.client.call<OpenApiDocument>('GET', '/docs-json')).body;
    const served = new Map<string, string[]>();
    for (const [path, operations] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const statuses = Object.keys(operation.responses ?? {}).filter((status) => /^2\d\d$/.test(status));
        served.set(`${method.toUpperCase()} ${path}`, statuses.sort());
      }
    }
    const documented = documentedRoutes();
    const operations = documentedOperations();
    expect(documented.size).toBeGreaterThan(20);
    expect(operations).toEqual(expect.arrayContaining(['GET /health', 'GET /health/ready', 'GET /metrics']));

    // Each way round: a route in one and not the other is a contract out of step.
    expect([...documented.keys()].filter((route) => !served.has(route))).toEqual([]);
    // The Swagger UI at /docs documents the others, not itself.
    expect(operations.filter((route) => route !== 'GET /docs' && !served.has(route))).toEqual([]);
    expect([...served.keys()].filter((route) => !documented.has(route) && !operations.includes(route))).toEqual([]);
    for (const [route, statuses] of documented) {
      expect({ route, statuses: served.get(route) }).toEqual({ route, statuses });
    }
  });

  it('serves the Swagger UI page', async () => {
    const page = await w.stack.client.raw('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('swagger-ui');
    expect((await w.stack.client.raw('GET', '/docs/swagger-ui-init.js')).status).toBe(200);
  });

  it('documents the purchase route, its DTOs, tags and bearer auth', async () => {
    const response = await w.stack.client.call<OpenApiDocument>('GET', '/docs-json');
    expect(response.status).toBe(200);
    const document = response.body;
    expect(document.openapi).toMatch(/^3\./);

    const purchase = document.paths['/api/sales/{id}/purchase']?.['post'];
    expect(purchase).toBeDefined();
    expect(purchase!.tags).toEqual(['Purchase']);
    expect(purchase!.security).toEqual([{ bearer: [] }]);
    expect(JSON.stringify(purchase!.requestBody)).toContain('#/components/schemas/PurchaseRequest');
    // Public routes carry no security requirement.
    expect(document.paths['/api/sales']?.['get']?.security).toBeUndefined();
    expect(document.paths['/api/auth/guest']?.['post']?.security).toBeUndefined();
    expect(document.paths['/health/ready']?.['get']?.tags).toEqual(['Operations']);

    const { schemas } = document.components;
    expect(Object.keys(schemas['PurchaseRequest']!.properties!)).toEqual(['token', 'quantity']);
    expect(schemas['PurchaseRequest']!.required).toEqual(['token']);
    expect(schemas['CreateSaleDto']!.required).toEqual(['name', 'priceCents', 'stock', 'endsAt']);
    expect(Object.keys(schemas['CreateSaleDto']!.properties!)).toEqual(
      expect.arrayContaining(['perUserLimit', 'startsAt', 'strategy', 'paymentTimeoutSeconds', 'imageUrl']),
    );
    expect(schemas['AdminSignInDto']!.required).toEqual(['password']);
    expect(Object.keys(schemas['GuestSignInDto']!.properties!)).toEqual(['name']);
    expect(document.tags.map((tag) => tag.name)).toEqual(
      expect.arrayContaining(['AdminSales', 'Auth', 'Operations', 'Purchase', 'Sales']),
    );
  });
});
