import {
  type AdminSignInRequest,
  AUTH_LIMITS,
  type GuestSignInRequest,
  type LoginRequest,
  type RegisterRequest,
} from '@flash-sale/contract';
import { IsString, MaxLength, MinLength } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptionalField } from '../common/validation';

export class GuestSignInDto implements GuestSignInRequest {
  @ApiPropertyOptional({
    description: 'Display name; a generated one when absent',
    maxLength: AUTH_LIMITS.maxNameLength,
    example: 'Ada',
  })
  @IsOptionalField()
  @IsString()
  @MaxLength(AUTH_LIMITS.maxNameLength)
  name?: string;
}

export class AdminSignInDto implements AdminSignInRequest {
  @ApiProperty({
    description: 'ADMIN_PASSWORD of the API',
    minLength: 1,
    maxLength: AUTH_LIMITS.maxAdminPasswordLength,
    example: 'admin',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(AUTH_LIMITS.maxAdminPasswordLength)
  password!: string;
}

export class RegisterDto implements RegisterRequest {
  @ApiProperty({
    description: 'The name to sign in with; unique (case-insensitive)',
    maxLength: AUTH_LIMITS.maxNameLength,
    example: 'ada',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(AUTH_LIMITS.maxNameLength)
  name!: string;

  @ApiProperty({
    minLength: AUTH_LIMITS.minPasswordLength,
    maxLength: AUTH_LIMITS.maxPasswordLength,
    example: 'correct horse battery',
  })
  @IsString()
  @MinLength(AUTH_LIMITS.minPasswordLength)
  @MaxLength(AUTH_LIMITS.maxPasswordLength)
  password!: string;
}

export class LoginDto implements LoginRequest {
  @ApiProperty({ maxLength: AUTH_LIMITS.maxNameLength, example: 'ada' })
  @IsString()
  @MinLength(1)
  @MaxLength(AUTH_LIMITS.maxNameLength)
  name!: string;

  // No minimum here: a wrong password of any length is just a wrong password (401, not 400).
  @ApiProperty({ maxLength: AUTH_LIMITS.maxPasswordLength, example: 'correct horse battery' })
  @IsString()
  @MaxLength(AUTH_LIMITS.maxPasswordLength)
  password!: string;
}
