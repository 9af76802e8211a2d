import { startStack, type RunningStack } from './support/running-stack';
import { createTestEnv, type TestEnv } from './support/test-env';

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { tags?: string[]; security?: unknown[]; requestBody?: unknown }>>;
  components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
  tags: { name: string }[];
}

describe('OpenAPI at /docs (real app)', () => {
  let testEnv: TestEnv;
  let stack: RunningStack;

  beforeAll(async () => {
    testEnv = await createTestEnv();
    stack = await startStack(testEnv.config, { worker: false });
  });

  afterAll(async () => {
    await stack.close();
    await testEnv.cleanup();
  });

  it('serves the Swagger UI page', async () => {
    const page = await stack.client.raw('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('swagger-ui');
    expect((await stack.client.raw('GET', '/docs/swagger-ui-init.js')).status).toBe(200);
  });

  it('documents the purchase route, its DTOs, tags and bearer auth', async () => {
    const response = await stack.client.call<OpenApiDocument>('GET', '/docs-json');
    expect(response.status).toBe(200);
    const document = response.body;
    expect(document.openapi).toMatch(/^3\./);

    const purchase = document.paths['/api/sales/{id}/purchase']?.['post'];
    expect(purchase).toBeDefined();
    expect(purchase!.tags).toEqual(['Purchase']);
    expect(purchase!.security).toEqual([{ bearer: [] }]);
    expect(JSON.stringify(purchase!.requestBody)).toContain('#/components/schemas/PurchaseDto');
    // Public routes carry no security requirement.
    expect(document.paths['/api/sales']?.['get']?.security).toBeUndefined();
    expect(document.paths['/api/auth/guest']?.['post']?.security).toBeUndefined();
    expect(document.paths['/health/ready']?.['get']?.tags).toEqual(['Operations']);

    const { schemas } = document.components;
    expect(Object.keys(schemas['PurchaseDto']!.properties!)).toEqual(['token', 'quantity']);
    expect(schemas['PurchaseDto']!.required).toEqual(['token']);
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
