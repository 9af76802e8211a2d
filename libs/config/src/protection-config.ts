import { ConfigError } from './config-error';
import { type Env, integer, oneOf } from './env-readers';

export interface RateLimit {
  points: number;
  durationSeconds: number;
}

export const RATE_LIMIT_PROFILES = ['standard', 'load-test'] as const;
export type RateLimitProfile = (typeof RATE_LIMIT_PROFILES)[number];

export interface ProtectionConfig {
  /**
   * `standard` (default) or `load-test`: the latter raises the per-IP sign-in limits for k6 and the
   * bench, which mint thousands of guests from one address. Per-user and per-sale limits stay.
   */
  rateLimitProfile: RateLimitProfile;
  /** Addresses (exact IPs) whose per-IP limits are lifted: a load generator's. Per-user limits still apply. */
  trustedIps: string[];
  limits: {
    guestSignInPerIp: RateLimit;
    /** Registration and name + password sign-in, per IP (password guessing). */
    accountSignInPerIp: RateLimit;
    adminSignInPerIp: RateLimit;
    /** Consecutive wrong admin passwords from one IP before that IP (only) is locked out. */
    adminFailuresBeforeLockout: number;
    adminLockoutSeconds: number;
    submitTokensPerUser: RateLimit;
    /** Waiting-room joins per user (a poll is paced by the room itself). */
    queueJoinsPerUser: RateLimit;
    purchasesPerUser: RateLimit;
    purchasesPerSale: RateLimit;
  };
  /** Load shedding: purchases are answered 503 at once while either bound is passed (0 = no bound). */
  shedding: { maxBacklog: number; maxEventLoopDelayMs: number; retryAfterSeconds: number };
  /** Deepest JSON nesting a body may have (deeper: 400). */
  maxBodyDepth: number;
}

/** Addresses and CIDR ranges as proxy-addr (Fastify's `trustProxy`) takes them; never `true` (anyone). */
export function trustedProxies(env: Env): string[] {
  const entries = (env['TRUST_PROXY'] ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    if (!/^([0-9a-fA-F.:]+(\/\d{1,3})?|loopback|linklocal|uniquelocal)$/.test(entry)) {
      throw new ConfigError(
        `TRUST_PROXY entry must be an IP, a CIDR range, loopback, linklocal or uniquelocal, got "${entry}"`,
      );
    }
  }
  return entries;
}

function rateLimit(env: Env, name: string, points: number, durationSeconds: number): RateLimit {
  return {
    points: integer(env, `${name}_POINTS`, points, 1, 10_000_000),
    durationSeconds: integer(env, `${name}_SECONDS`, durationSeconds, 1, 86_400),
  };
}

export function protectionConfig(env: Env): ProtectionConfig {
  const profile = oneOf(env, 'RATE_LIMIT_PROFILE', 'standard', RATE_LIMIT_PROFILES);
  // load-test: k6 and the bench sign thousands of guests in from one address; nothing else changes.
  const signInPoints = profile === 'load-test' ? 1_000_000 : 20;
  const trustedIps = (env['RATE_LIMIT_TRUSTED_IPS'] ?? '')
    .split(',')
    .map((ip) => ip.trim())
    .filter(Boolean);
  for (const ip of trustedIps) {
    if (!/^[0-9a-fA-F.:]+$/.test(ip)) throw new ConfigError(`RATE_LIMIT_TRUSTED_IPS entry must be an IP, got "${ip}"`);
  }
  return {
    rateLimitProfile: profile,
    trustedIps,
    limits: {
      guestSignInPerIp: rateLimit(env, 'RATE_LIMIT_GUEST_SIGN_IN', signInPoints, 60),
      accountSignInPerIp: rateLimit(env, 'RATE_LIMIT_ACCOUNT_SIGN_IN', profile === 'load-test' ? 1_000 : 10, 60),
      adminSignInPerIp: rateLimit(env, 'RATE_LIMIT_ADMIN_SIGN_IN', profile === 'load-test' ? 1_000 : 10, 60),
      adminFailuresBeforeLockout: integer(env, 'ADMIN_FAILURES_BEFORE_LOCKOUT', 5, 1, 1_000),
      adminLockoutSeconds: integer(env, 'ADMIN_LOCKOUT_SECONDS', 900, 1, 86_400),
      submitTokensPerUser: rateLimit(env, 'RATE_LIMIT_SUBMIT_TOKENS', 10, 10),
      queueJoinsPerUser: rateLimit(env, 'RATE_LIMIT_QUEUE_JOINS', 10, 10),
      purchasesPerUser: rateLimit(env, 'RATE_LIMIT_PURCHASES', 10, 10),
      purchasesPerSale: rateLimit(env, 'RATE_LIMIT_SALE_PURCHASES', 20_000, 1),
    },
    shedding: {
      maxBacklog: integer(env, 'SHED_MAX_BACKLOG', 100_000, 0, 100_000_000),
      maxEventLoopDelayMs: integer(env, 'SHED_MAX_EVENT_LOOP_DELAY_MS', 500, 0, 60_000),
      retryAfterSeconds: integer(env, 'SHED_RETRY_AFTER_SECONDS', 1, 1, 3_600),
    },
    maxBodyDepth: integer(env, 'MAX_BODY_DEPTH', 16, 2, 256),
  };
}
