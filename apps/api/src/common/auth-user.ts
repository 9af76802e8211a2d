import type { FastifyInstance } from 'fastify';

export type Role = 'guest' | 'admin';

/** Who is calling, as read from a verified JWT. */
export interface AuthUser {
  id: string;
  name: string;
  role: Role;
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The verified caller, set once per request by whoever checks the access token first (the auth
     * guard, or the purchase route before Nest); `null` until then.
     */
    user: AuthUser | null;
  }
}

/**
 * Declares the request's `user` slot up front (Fastify's `decorateRequest`), so every request object
 * has the same shape and setting it later does not change its hidden class.
 */
export function decorateRequests(fastify: FastifyInstance): void {
  fastify.decorateRequest('user', null);
}
