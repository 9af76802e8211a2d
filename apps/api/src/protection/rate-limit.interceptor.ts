import { DomainError, ErrorCode } from '@flash-sale/domain';
import {
  applyDecorators,
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
  SetMetadata,
  UseInterceptors,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { catchError, from, type Observable, switchMap, tap, throwError } from 'rxjs';
import { LIMIT_PROFILES, type LimitProfile, RateLimits } from './rate-limits';

const RATE_LIMIT_PROFILE = 'protection:rate-limit-profile';

/** A limit whose failures (wrong credentials) lock the caller's IP out once its budget is spent. */
const LOCKOUT_OF: Partial<Record<LimitProfile, LimitProfile>> = { 'admin-sign-in': 'admin-failures' };

/**
 * `@RateLimit('guest-sign-in')` on a route: one point of that limit per request, per IP or per user
 * as the profile says (`rate-limits.ts`), `429 RATE_LIMITED` with `retry-after` when spent. An
 * interceptor, so it runs after the guards (401/403 first) and before the validation pipe (400 after
 * 429), as docs/api.md orders them. For a sign-in route this is the whole job: `@RateLimit('sign-in-…')`.
 */
export const RateLimit = (profile: LimitProfile) =>
  applyDecorators(SetMetadata(RATE_LIMIT_PROFILE, profile), UseInterceptors(RateLimitInterceptor));

@Injectable()
export class RateLimitInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly limits: RateLimits,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const profile = this.reflector.get<LimitProfile | undefined>(RATE_LIMIT_PROFILE, context.getHandler());
    if (!profile) return next.handle();
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const subject = LIMIT_PROFILES[profile].subject === 'ip' ? request.ip : request.user?.id;
    if (!subject) throw new DomainError(ErrorCode.Unauthenticated, 'Sign in first');
    const lockout = LOCKOUT_OF[profile];
    const admitted = async () => {
      if (lockout) await this.limits.ensureNotBlocked(lockout, subject);
      await this.limits.consume(profile, subject);
    };
    const handled = from(admitted()).pipe(switchMap(() => next.handle()));
    if (!lockout) return handled;
    return handled.pipe(
      tap(() => void this.limits.reset(lockout, subject)),
      // The failure is counted before the 401 leaves, so the next guess already sees it.
      catchError((error: unknown) => {
        if (!(error instanceof DomainError) || error.code !== ErrorCode.InvalidCredentials) throw error;
        return from(this.limits.consume(lockout, subject).catch(() => undefined)).pipe(
          switchMap(() => throwError(() => error)),
        );
      }),
    );
  }
}
