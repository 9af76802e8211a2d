import { ConfigError, loadConfig } from './app-config';
import { DEVELOPMENT_SECRETS } from './secrets';

/** What `openssl rand -base64 48` prints: 64 characters of base64. */
const JWT = 'q3V8mZ0kLr7T1yBfXo2Wc9Hs4Ne6Pa5Gd+Ju/RtKiEh0vYbQx8Sl3Mn7Fw1Zp2Ck9D';
const WEBHOOK = 'Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3ab4cd5ef6gh7ij8kl9mn0op1qr';
const ADMIN = 'correct horse battery staple';
const GOOD = { NODE_ENV: 'production', JWT_SECRET: JWT, PAYMENT_WEBHOOK_SECRET: WEBHOOK, ADMIN_PASSWORD: ADMIN };

/** The message production stops with, given these changes to good secrets. */
function refusal(changes: Record<string, string | undefined>): string {
  try {
    loadConfig({ ...GOOD, ...changes });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`production booted with ${JSON.stringify(changes)}`);
}

describe('secrets in production', () => {
  it('boots with strong secrets; metrics closed without a token, docs off, no development notice', () => {
    const config = loadConfig(GOOD);
    expect(config.auth).toMatchObject({ jwtSecret: JWT, adminPassword: ADMIN });
    expect(config.payment.webhookSecret).toBe(WEBHOOK);
    expect(config.ops.metrics).toEqual({ token: undefined, open: false });
    expect(config.ops.docsEnabled).toBe(false);
    expect(config.developmentSecretsNotice).toBeUndefined();
    expect(loadConfig({ ...GOOD, DOCS_ENABLED: 'true' }).ops.docsEnabled).toBe(true);
    const token = 'Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe-metrics';
    expect(loadConfig({ ...GOOD, METRICS_TOKEN: token }).ops.metrics).toEqual({ token, open: false });
  });

  it('names every missing secret and says how to make one', () => {
    const message = refusal({ JWT_SECRET: undefined, PAYMENT_WEBHOOK_SECRET: '' });
    expect(message).toMatch(/JWT_SECRET is not set\n {2}- PAYMENT_WEBHOOK_SECRET is not set\n/);
    expect(message).toContain('openssl rand -base64 48');
  });

  it.each(Object.entries(DEVELOPMENT_SECRETS))('refuses the public development value of %s', (name, value) => {
    const message = refusal({ [name]: value });
    expect(message).toContain(name);
    expect(message).toContain('openssl rand -base64 48');
  });

  it.each([
    ['JWT_SECRET', 'x', /JWT_SECRET is too short \(1 characters, at least 32\)/],
    ['JWT_SECRET', 'a'.repeat(31) + 'B1', /JWT_SECRET is too predictable/],
    // `openssl rand -hex 32`: long, but only two classes.
    ['JWT_SECRET', '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', /JWT_SECRET is too predictable/],
    [
      'PAYMENT_WEBHOOK_SECRET',
      'dev-only-payment-webhook-secret-but-longer',
      /PAYMENT_WEBHOOK_SECRET is too predictable/,
    ],
    ['PAYMENT_WEBHOOK_SECRET', 'Short1', /PAYMENT_WEBHOOK_SECRET is too short/],
    ['METRICS_TOKEN', 'metrics', /METRICS_TOKEN is too short/],
    ['ADMIN_PASSWORD', 'Admin', /ADMIN_PASSWORD is a well-known default password/],
    ['ADMIN_PASSWORD', 'password', /ADMIN_PASSWORD is a well-known default password/],
    ['ADMIN_PASSWORD', 'S3cret-admin!', /ADMIN_PASSWORD is too short \(13 characters, at least 15\)/],
    ['ADMIN_PASSWORD', 'adminadminadmin', /ADMIN_PASSWORD repeats too few characters/],
  ])('refuses a weak %s (%s)', (name, value, reason) => {
    const message = refusal({ [name]: value });
    expect(message).toMatch(reason);
    expect(message).toContain('openssl rand -base64 48');
  });

  it('refuses one secret used for two purposes', () => {
    expect(refusal({ PAYMENT_WEBHOOK_SECRET: JWT })).toContain('PAYMENT_WEBHOOK_SECRET is the same as JWT_SECRET');
    expect(refusal({ METRICS_TOKEN: WEBHOOK })).toContain('METRICS_TOKEN is the same as PAYMENT_WEBHOOK_SECRET');
  });

  it('lists every problem at once', () => {
    const message = refusal({ JWT_SECRET: 'x', ADMIN_PASSWORD: 'admin', PAYMENT_WEBHOOK_SECRET: undefined });
    expect(message).toMatch(
      /PAYMENT_WEBHOOK_SECRET is not set[\s\S]*JWT_SECRET is too short[\s\S]*ADMIN_PASSWORD is a/,
    );
  });
});

describe('secrets in development', () => {
  it('falls back to the development values and says so in one line', () => {
    const config = loadConfig({});
    expect(config.auth.jwtSecret).toBe(DEVELOPMENT_SECRETS.JWT_SECRET);
    expect(config.developmentSecretsNotice).toBe(
      'Development mode, not for deployment. JWT_SECRET, ADMIN_PASSWORD, PAYMENT_WEBHOOK_SECRET unset: using the ' +
        'public development values (admin password "admin"). NODE_ENV=production refuses these (docs/operations.md)',
    );
    expect(config.developmentSecretsNotice).not.toContain('\n');
  });

  it('keeps a weak value it is given, and names what production would refuse', () => {
    const config = loadConfig({ JWT_SECRET: 'x', ADMIN_PASSWORD: ADMIN, PAYMENT_WEBHOOK_SECRET: WEBHOOK });
    expect(config.auth.jwtSecret).toBe('x');
    expect(config.developmentSecretsNotice).toContain('production would refuse: JWT_SECRET is too short');
    expect(config.developmentSecretsNotice).not.toContain('unset');
  });

  it('has no notice when every secret would pass production', () => {
    const { NODE_ENV: _production, ...strong } = GOOD;
    expect(loadConfig(strong).developmentSecretsNotice).toBeUndefined();
  });
});

describe('TRUST_PROXY', () => {
  it('takes addresses, CIDR ranges and proxy-addr names; never "true"', () => {
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1, 10.1.0.0/16,loopback' }).http.trustProxy).toEqual([
      '10.0.0.1',
      '10.1.0.0/16',
      'loopback',
    ]);
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY entry must be an IP/);
    expect(() => loadConfig({ TRUST_PROXY: '*' })).toThrow(/TRUST_PROXY entry/);
  });
});
