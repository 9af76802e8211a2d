import type { AdminSession, Session } from '@flash-sale/contract';
import { Body, Controller, Headers, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { RateLimit } from '../protection/rate-limit.interceptor';
import { AdminSignInDto, GuestSignInDto, LoginDto, RegisterDto } from './auth.dto';
import { AuthGuard } from './auth.guard';
import { AuthService } from './auth.service';

@Controller('auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly guard: AuthGuard,
  ) {}

  @Post('guest')
  @RateLimit('guest-sign-in')
  @HttpCode(HttpStatus.CREATED)
  guest(@Body() body: GuestSignInDto): Promise<Session> {
    return this.auth.signInGuest(body.name);
  }

  @Post('admin')
  @RateLimit('admin-sign-in')
  @HttpCode(HttpStatus.CREATED)
  admin(@Body() body: AdminSignInDto): Promise<AdminSession> {
    return this.auth.signInAdmin(body.password);
  }

  /**
   * A new account. With a guest's token, the guest keeps its user id (and so its orders); without one,
   * or with an admin's, a new id is made. A token that does not verify is a 401, not silently ignored.
   */
  @Post('register')
  @RateLimit('account-sign-in')
  @HttpCode(HttpStatus.CREATED)
  register(@Body() body: RegisterDto, @Headers('authorization') authorization?: string): Promise<Session> {
    const caller = authorization?.startsWith('Bearer ')
      ? this.guard.userOf(authorization.slice('Bearer '.length).trim())
      : undefined;
    return this.auth.register(body.name, body.password, caller?.role === 'guest' ? caller : undefined);
  }

  @Post('login')
  @RateLimit('account-sign-in')
  @HttpCode(HttpStatus.CREATED)
  login(@Body() body: LoginDto): Promise<Session> {
    return this.auth.login(body.name, body.password);
  }
}
