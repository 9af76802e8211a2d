import { createSecretKey } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '@flash-sale/config';
import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { ProtectionModule } from '../protection/protection.module';
import { AuthController } from './auth.controller';
import { AuthGuard } from './auth.guard';
import { AuthService } from './auth.service';

@Module({
  imports: [
    ProtectionModule,
    JwtModule.registerAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => {
        // Hand jsonwebtoken a ready KeyObject. Given a string, it first tries to parse it as a public
        // key on *every* call and falls back to a secret key after the exception, which is costly.
        const key = createSecretKey(Buffer.from(config.auth.jwtSecret));
        return {
          secretOrKeyProvider: () => key,
          signOptions: { algorithm: 'HS256', expiresIn: config.auth.jwtTtlSeconds },
          verifyOptions: { algorithms: ['HS256'] },
        };
      },
    }),
  ],
  controllers: [AuthController],
  providers: [AuthService, AuthGuard],
  exports: [AuthGuard, JwtModule],
})
export class AuthModule {}
