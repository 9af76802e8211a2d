import { IsOptionalField } from '../common/validation';
import { IsString, MaxLength, MinLength } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class GuestSignInDto {
  @ApiPropertyOptional({ description: 'Display name; a generated one when absent', maxLength: 64, example: 'Ada' })
  @IsOptionalField()
  @IsString()
  @MaxLength(64)
  name?: string;
}

export class AdminSignInDto {
  @ApiProperty({ description: 'ADMIN_PASSWORD of the API', minLength: 1, maxLength: 256, example: 'admin' })
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  password!: string;
}

export class RegisterDto {
  @ApiProperty({ description: 'The name to sign in with; unique (case-insensitive)', maxLength: 64, example: 'ada' })
  @IsString()
  @MinLength(1)
  @MaxLength(64)
  name!: string;

  @ApiProperty({ minLength: 8, maxLength: 128, example: 'correct horse battery' })
  @IsString()
  @MinLength(8)
  @MaxLength(128)
  password!: string;
}

export class LoginDto {
  @ApiProperty({ maxLength: 64, example: 'ada' })
  @IsString()
  @MinLength(1)
  @MaxLength(64)
  name!: string;

  // No minimum here: a wrong password of any length is just a wrong password (401, not 400).
  @ApiProperty({ maxLength: 128, example: 'correct horse battery' })
  @IsString()
  @MaxLength(128)
  password!: string;
}
