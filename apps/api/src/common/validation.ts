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

/**
 * A body DTO on a hot path may recognise a valid body by hand. class-transformer + class-validator
 * build and walk objects per request for two fields; a few comparisons do the same job.
 * `readIfValid` returns the DTO only when class-validator would accept the body exactly as it is;
 * for anything else it returns `undefined` and class-validator decides and words the 400, so every
 * refusal stays what it was. The DTO keeps its decorators (they are the OpenAPI schema and the
 * refusals), and its spec runs both on the same inputs so they cannot drift apart.
 */
export interface HandCheckedBody<T> {
  readIfValid(body: Readonly<Record<string, unknown>>): T | undefined;
}

function handChecked(metatype: unknown): HandCheckedBody<unknown> | undefined {
  const candidate = metatype as Partial<HandCheckedBody<unknown>> | undefined;
  return typeof candidate?.readIfValid === 'function' ? (candidate as HandCheckedBody<unknown>) : undefined;
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
    if (metadata.type === 'body') {
      const valid = handChecked(metadata.metatype)?.readIfValid(value as Record<string, unknown>);
      if (valid !== undefined) return valid;
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
