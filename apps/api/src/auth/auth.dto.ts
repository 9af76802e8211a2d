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
