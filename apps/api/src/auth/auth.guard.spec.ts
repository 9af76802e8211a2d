import { createHmac } from 'node:crypto';
import { loadConfig } from '@flash-sale/config';
import { DomainError, ErrorCode } from '@flash-sale/domain';
import { Reflector } from '@nestjs/core';
import { JwtService } from '@nestjs/jwt';
import { AuthGuard } from './auth.guard';

const config = loadConfig({ JWT_SECRET: 'unit-test-secret' });
const guard = new AuthGuard(new Reflector(), config);
const signer = new JwtService({ secret: config.auth.jwtSecret });

/** A token with exactly the given header and claims, signed with HMAC over our secret. */
function handMade(header: object, claims: object, hmac: 'sha256' | 'sha512' = 'sha256'): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const body = `${part(header)}.${part(claims)}`;
  return `${body}.${createHmac(hmac, config.auth.jwtSecret).update(body).digest('base64url')}`;
}

async function refusal(token: string): Promise<unknown> {
  return guard.verify(token).then(
    () => 'accepted',
    (error: unknown) => (error instanceof DomainError ? error.code : error),
  );
}

describe('AuthGuard.verify (fast-jwt over the tokens @nestjs/jwt signs)', () => {
  const now = Math.floor(Date.now() / 1000);

  it('accepts a token the API signed, every time', async () => {
    const token = await signer.signAsync({ sub: 'u-1', name: 'Ada', role: 'guest' }, { expiresIn: 60 });
    await expect(guard.verify(token)).resolves.toEqual({ id: 'u-1', name: 'Ada', role: 'guest' });
    await expect(guard.verify(token)).resolves.toEqual({ id: 'u-1', name: 'Ada', role: 'guest' });
  });

  it('refuses expired, not-yet-valid, other-algorithm, unsigned and tampered tokens', async () => {
    const claims = { sub: 'u-1', name: 'Ada', role: 'admin', iat: now };
    const hs256 = { alg: 'HS256', typ: 'JWT' };
    expect(await refusal(handMade(hs256, { ...claims, exp: now - 1 }))).toBe(ErrorCode.Unauthenticated);
    expect(await refusal(handMade(hs256, { ...claims, exp: now + 60, nbf: now + 30 }))).toBe(ErrorCode.Unauthenticated);
    expect(await refusal(handMade({ alg: 'HS512', typ: 'JWT' }, { ...claims, exp: now + 60 }, 'sha512'))).toBe(
      ErrorCode.Unauthenticated,
    );
    const unsigned = handMade({ alg: 'none', typ: 'JWT' }, { ...claims, exp: now + 60 }).replace(/[^.]+$/, '');
    expect(await refusal(unsigned)).toBe(ErrorCode.Unauthenticated);
    const genuine = handMade(hs256, { ...claims, role: 'guest', exp: now + 60 });
    const [header, , signature] = genuine.split('.');
    const promoted = `${header}.${Buffer.from(JSON.stringify({ ...claims, exp: now + 60 })).toString('base64url')}.${signature}`;
    expect(await refusal(promoted)).toBe(ErrorCode.Unauthenticated);
    expect(await refusal(genuine)).toBe('accepted'); // the same recipe, untampered, is accepted: the refusals are real
  });
});
