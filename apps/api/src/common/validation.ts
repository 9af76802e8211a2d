import { DomainError, ErrorCode } from '@flash-sale/domain';
import { type ArgumentMetadata, type ValidationError, ValidationPipe } from '@nestjs/common';
import { ValidateIf } from 'class-validator';
import { UnreadableBody } from './request-body';

function describe(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((error) => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) =>
      message.startsWith(error.property) ? message.replace(error.property, path) : `${path}: ${message}`,
    );
    return [...own, ...describe(error.children ?? [], path)];
  });
}

/** Strict DTO validation (unknown fields are refused, not dropped), after the guards have run. */
class StrictValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (value instanceof UnreadableBody) throw value.toError();
    if (metadata.type === 'body' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
      // An absent body is validated as {} so that a missing required field is named.
      if (value !== undefined)
        throw new DomainError(ErrorCode.ValidationFailed, 'The request body must be a JSON object');
      return super.transform({}, metadata);
    }
    return super.transform(value, metadata);
  }
}

export function createValidationPipe(): ValidationPipe {
  return new StrictValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    exceptionFactory: (errors) => {
      const problems = describe(errors);
      return new DomainError(ErrorCode.ValidationFailed, problems.join('; ') || 'Invalid request', { problems });
    },
  });
}

/**
 * Like `@IsOptional()`, but only an absent field is optional: an explicit `null` is still validated
 * (and refused), so `{"quantity": null}` is a 400, not a silent default.
 */
export const IsOptionalField = () => ValidateIf((_object, value) => value !== undefined);
