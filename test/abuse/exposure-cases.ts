import { DEVELOPMENT_SECRETS } from '@flash-sale/config';
import { type AttackCase, jwt } from './attack-world';

/**
 * What a production deployment shows a stranger (the spec runs the API with NODE_ENV=production):
 * metrics only for METRICS_TOKEN, no OpenAPI pages, no sign-in with the repository's defaults, and the
 * queue board's login only as a POST with a header (a token in a URL lands in logs and history).
 */
export const exposureCases: AttackCase[] = [
  // --- /metrics: the bearer of METRICS_TOKEN only
  ['metrics: no token', () => ({ path: '/metrics', method: 'GET' }), 401, 'UNAUTHENTICATED'],
  [
    'metrics: another token',
    (w) => ({ path: '/metrics', method: 'GET', token: `${w.metricsToken.slice(0, -1)}#` }),
    401,
    'UNAUTHENTICATED',
  ],
  [
    'metrics: an admin access token is not the metrics token',
    (w) => ({ path: '/metrics', method: 'GET', token: w.admin }),
    401,
    'UNAUTHENTICATED',
  ],
  [
    'metrics: the token in the query string',
    (w) => ({ path: `/metrics?token=${encodeURIComponent(w.metricsToken)}`, method: 'GET' }),
    401,
    'UNAUTHENTICATED',
  ],
  [
    'metrics: the token as Basic credentials',
    (w) => ({
      path: '/metrics',
      method: 'GET',
      headers: { authorization: `Basic ${Buffer.from(`prometheus:${w.metricsToken}`).toString('base64')}` },
    }),
    401,
    'UNAUTHENTICATED',
  ],
  [
    'metrics: the token with a prefix of its own',
    (w) => ({ path: '/metrics', method: 'GET', token: `x${w.metricsToken}` }),
    401,
    'UNAUTHENTICATED',
  ],
  // --- OpenAPI: off in production
  ['docs: the Swagger UI', () => ({ path: '/docs', method: 'GET' }), 404, 'NOT_FOUND'],
  ['docs: the OpenAPI document', () => ({ path: '/docs-json', method: 'GET' }), 404, 'NOT_FOUND'],
  // --- the repository's development values open nothing
  [
    'admin sign-in with the development password',
    () => ({ path: '/api/auth/admin', body: JSON.stringify({ password: DEVELOPMENT_SECRETS.ADMIN_PASSWORD }) }),
    401,
    'INVALID_CREDENTIALS',
  ],
  [
    'admin sign-in with a common password',
    () => ({ path: '/api/auth/admin', body: '{"password":"password"}' }),
    401,
    'INVALID_CREDENTIALS',
  ],
  [
    'queue board: an admin JWT signed with the development secret',
    (w) => ({
      path: '/admin/queues',
      method: 'GET',
      token: jwt(w, { sub: 'admin', role: 'admin' }, { expiresIn: 600 }, DEVELOPMENT_SECRETS.JWT_SECRET),
    }),
    401,
    'UNAUTHENTICATED',
  ],
  [
    'queue board: a guest token in the cookie',
    (w) => ({ path: '/admin/queues/api/queues', method: 'GET', headers: { cookie: `fs_admin=${w.buyer.token}` } }),
    403,
    'FORBIDDEN',
  ],
  [
    'queue board: login by GET with the token in the URL',
    (w) => ({ path: `/admin/queues/login?token=${w.admin}`, method: 'GET' }),
    404,
    'NOT_FOUND',
  ],
  [
    'queue board: login by POST with the token in the URL',
    (w) => ({ path: `/admin/queues/login?token=${w.admin}`, method: 'POST' }),
    401,
    'UNAUTHENTICATED',
  ],
];
