import { JwtService } from '@nestjs/jwt';
import { signPaymentBody } from '../../apps/api/src/payments/payment-signature';
import type { StackWorld } from '../support/stack-world';

/** What test/abuse/attack-input.int.spec.ts sets up before the cases run: the targets an attacker aims at. */
export interface AttackWorld extends StackWorld {
  buyer: { token: string; userId: string };
  other: { token: string; userId: string };
  /** A redis-lua sale. */
  saleId: string;
  /** A db-optimistic sale, where the buyer has one paid order. */
  dbSaleId: string;
  orderNo: string;
  /** The provider's callback of that payment, already applied. */
  paidCallback: string;
  jwtSecret: string;
  /** The API runs as in production: /metrics answers only this bearer token. */
  metricsToken: string;
}

export type Send = { method?: string; path: string; token?: string; body?: string; headers?: Record<string, string> };

/** [name, request, status, code]: the request is built lazily, once the set-up has run. */
export type AttackCase = [name: string, build: (world: AttackWorld) => Send, status: number, code: string];

export const hour = 3_600_000;
export const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
export const nestedArrays = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
export const nestedObjects = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
export const validToken = 'abcdefgh12345678';
export const purchasePath = (w: AttackWorld) => `/api/sales/${w.saleId}/purchase`;

export const jwt = (
  w: AttackWorld,
  payload: Record<string, unknown>,
  options: Record<string, unknown> = {},
  secret = w.jwtSecret,
) => new JwtService({ secret }).sign(payload, options);

export const signed = (w: AttackWorld, body: string, headers: Record<string, string> = {}) => ({
  path: '/api/payments/callback',
  body,
  headers: { 'x-payment-signature': signPaymentBody(body, w.testEnv.config.payment.webhookSecret), ...headers },
});
