import { IsOptionalField } from '../common/validation';
import { IsString, MaxLength, MinLength } from 'class-validator';

export class GuestSignInDto {
  @IsOptionalField()
  @IsString()
  @MaxLength(64)
  name?: string;
}

export class AdminSignInDto {
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  password!: string;
}
