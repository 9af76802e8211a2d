import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { RateLimit } from '../protection/rate-limit.interceptor';
import { AdminSignInDto, GuestSignInDto } from './auth.dto';
import { AuthService } from './auth.service';

@Controller('auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Post('guest')
  @RateLimit('guest-sign-in')
  @HttpCode(HttpStatus.CREATED)
  guest(@Body() body: GuestSignInDto) {
    return this.auth.signInGuest(body.name);
  }

  @Post('admin')
  @RateLimit('admin-sign-in')
  @HttpCode(HttpStatus.CREATED)
  admin(@Body() body: AdminSignInDto) {
    return this.auth.signInAdmin(body.password);
  }
}
