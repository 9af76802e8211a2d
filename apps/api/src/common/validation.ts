import { DomainError, ErrorCode } from '@flash-sale/domain';
import { type ValidationError, ValidationPipe } from '@nestjs/common';

function describe(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((error) => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) =>
      message.startsWith(error.property) ? message.replace(error.property, path) : `${path}: ${message}`,
    );
    return [...own, ...describe(error.children ?? [], path)];
  });
}

/** Strict DTO validation: unknown fields are refused, not silently dropped. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    stopAtFirstError: false,
    exceptionFactory: (errors) => {
      const problems = describe(errors);
      return new DomainError(ErrorCode.ValidationFailed, problems.join('; ') || 'Invalid request', { problems });
    },
  });
}
