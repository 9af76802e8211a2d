import { ConfigError } from './config-error';

type Env = Record<string, string | undefined>;

/**
 * The development values of the secrets. The repository publishes them, so anyone could sign an admin
 * token or a payment callback for a deployment that kept them: production refuses them by name.
 */
export const DEVELOPMENT_SECRETS = {
  JWT_SECRET: 'dev-only-jwt-secret-change-me',
  ADMIN_PASSWORD: 'admin',
  PAYMENT_WEBHOOK_SECRET: 'dev-only-payment-webhook-secret',
} as const;

export interface Secrets {
  jwtSecret: string;
  adminPassword: string;
  webhookSecret: string;
  /** The bearer token `/metrics` (API and worker) require; undefined: none is configured. */
  metricsToken: string | undefined;
}

const HOW_TO_MAKE_ONE = 'make one with `openssl rand -base64 48`';
/** Signing keys and tokens: HS256 and HMAC-SHA256 want a key at least as long as the hash (32 bytes). */
const KEY_MIN_LENGTH = 32;
/**
 * Three of the four classes rather than all four: `openssl rand -base64 48` always has lower- and
 * upper-case letters and nearly always digits, but one time in eight neither `+` nor `/`.
 */
const KEY_MIN_CLASSES = 3;
const CHARACTER_CLASSES = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/];
/** NIST SP 800-63B's minimum for a password that is the only factor; no composition rules, a block list. */
const ADMIN_PASSWORD_MIN_LENGTH = 15;
/** Stops `aaaaaaaaaaaaaaaa` and `adminadminadmin`, which pass any length rule. */
const MIN_DISTINCT_CHARACTERS = 6;
/** Compared without case: what every scanner tries first on an admin sign-in. */
const COMMON_PASSWORDS = new Set([
  ...Object.values(DEVELOPMENT_SECRETS),
  'password',
  'password123',
  'administrator',
  'changeme',
  'change-me',
  'secret',
  'letmein',
  'qwerty',
  'root',
  'toor',
  'default',
  '123456',
  '12345678',
  '123456789',
  '1234567890',
]);

const distinct = (value: string) => new Set(value).size;

function keyWeakness(name: string, value: string): string | undefined {
  const classes = CHARACTER_CLASSES.filter((pattern) => pattern.test(value)).length;
  if ((Object.values(DEVELOPMENT_SECRETS) as string[]).includes(value)) {
    return `${name} is the public development value from the repository`;
  }
  if (value.length < KEY_MIN_LENGTH) {
    return `${name} is too short (${value.length} characters, at least ${KEY_MIN_LENGTH})`;
  }
  if (classes < KEY_MIN_CLASSES || distinct(value) < MIN_DISTINCT_CHARACTERS) {
    return `${name} is too predictable (it needs ${KEY_MIN_CLASSES} of: lower-case, upper-case, digits, symbols)`;
  }
  return undefined;
}

function adminPasswordWeakness(value: string): string | undefined {
  if (COMMON_PASSWORDS.has(value.toLowerCase())) return 'ADMIN_PASSWORD is a well-known default password';
  if (value.length < ADMIN_PASSWORD_MIN_LENGTH) {
    return `ADMIN_PASSWORD is too short (${value.length} characters, at least ${ADMIN_PASSWORD_MIN_LENGTH})`;
  }
  if (distinct(value) < MIN_DISTINCT_CHARACTERS) return 'ADMIN_PASSWORD repeats too few characters';
  return undefined;
}

/**
 * Each secret has one holder (the API, the admin, the payment provider, Prometheus): one reused for
 * another purpose lets its holder do the other's job, e.g. a payment provider sign admin tokens.
 */
function reuseWeaknesses(given: [string, string | undefined][]): string[] {
  const found: string[] = [];
  given.forEach(([name, value], index) => {
    const earlier = given.slice(0, index).find(([, other]) => value && other === value);
    if (earlier) found.push(`${name} is the same as ${earlier[0]}`);
  });
  return found;
}

/**
 * The secrets, and in production only strong ones: every problem is named in one ConfigError. Development
 * falls back to DEVELOPMENT_SECRETS; `notice` then says, in one line, what production would refuse.
 */
export function readSecrets(env: Env, production: boolean): { secrets: Secrets; notice: string | undefined } {
  const given = (name: string) => env[name] || undefined;
  const names = Object.keys(DEVELOPMENT_SECRETS) as (keyof typeof DEVELOPMENT_SECRETS)[];
  const missing = names.filter((name) => !given(name));
  const jwtSecret = given('JWT_SECRET');
  const adminPassword = given('ADMIN_PASSWORD');
  const webhookSecret = given('PAYMENT_WEBHOOK_SECRET');
  const metricsToken = given('METRICS_TOKEN');
  const weaknesses = [
    jwtSecret && keyWeakness('JWT_SECRET', jwtSecret),
    webhookSecret && keyWeakness('PAYMENT_WEBHOOK_SECRET', webhookSecret),
    metricsToken && keyWeakness('METRICS_TOKEN', metricsToken),
    adminPassword && adminPasswordWeakness(adminPassword),
    ...reuseWeaknesses([
      ['JWT_SECRET', jwtSecret],
      ['PAYMENT_WEBHOOK_SECRET', webhookSecret],
      ['METRICS_TOKEN', metricsToken],
      ['ADMIN_PASSWORD', adminPassword],
    ]),
  ].filter((weakness): weakness is string => typeof weakness === 'string');
  if (production && missing.length + weaknesses.length > 0) {
    const problems = [...missing.map((name) => `${name} is not set`), ...weaknesses];
    throw new ConfigError(
      `NODE_ENV=production needs strong secrets:\n  - ${problems.join('\n  - ')}\n` +
        `For each, ${HOW_TO_MAKE_ONE} (the admin password: at least ${ADMIN_PASSWORD_MIN_LENGTH} characters); docs/operations.md`,
    );
  }
  const secrets: Secrets = {
    jwtSecret: jwtSecret ?? DEVELOPMENT_SECRETS.JWT_SECRET,
    adminPassword: adminPassword ?? DEVELOPMENT_SECRETS.ADMIN_PASSWORD,
    webhookSecret: webhookSecret ?? DEVELOPMENT_SECRETS.PAYMENT_WEBHOOK_SECRET,
    metricsToken,
  };
  return { secrets, notice: production ? undefined : developmentNotice(missing, weaknesses) };
}

function developmentNotice(defaulted: string[], weaknesses: string[]): string | undefined {
  const parts: string[] = [];
  if (defaulted.length > 0) {
    const admin = defaulted.includes('ADMIN_PASSWORD')
      ? ` (admin password "${DEVELOPMENT_SECRETS.ADMIN_PASSWORD}")`
      : '';
    parts.push(`${defaulted.join(', ')} unset: using the public development values${admin}`);
  }
  if (weaknesses.length > 0) parts.push(`production would refuse: ${weaknesses.join('; ')}`);
  if (parts.length === 0) return undefined;
  return `Development mode, not for deployment. ${parts.join('. ')}. NODE_ENV=production refuses these (docs/operations.md)`;
}
