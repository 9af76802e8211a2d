import { type PurchaseRequest, SALE_LIMITS } from '@flash-sale/contract';
import { DomainError, ErrorCode } from '@flash-sale/domain';
import Ajv, { type ErrorObject, type SchemaObject } from 'ajv';
import { UnreadableBody } from '../common/request-body';

const SUBMIT_TOKEN_PATTERN = '^[A-Za-z0-9_.-]{8,255}$';

/**
 * The purchase body, once: ajv validates requests against it and the OpenAPI document publishes it
 * (purchase.route.ts), so the two cannot disagree.
 */
export const PURCHASE_BODY_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['token'],
  additionalProperties: false,
  properties: {
    token: {
      type: 'string',
      pattern: SUBMIT_TOKEN_PATTERN,
      description: 'Submit token from POST /api/sales/{id}/tokens: single use, bound to the caller and the sale',
    },
    quantity: {
      type: 'integer',
      minimum: 1,
      maximum: SALE_LIMITS.maxQuantity,
      default: 1,
      description: 'Units to buy',
    },
  },
};

/**
 * Strict: nothing coerced (`"2"` is not a quantity), nothing dropped (an unknown field is refused),
 * no default written into the body; every problem reported, not only the first.
 */
const ajv = new Ajv({ allErrors: true, coerceTypes: false, removeAdditional: false, useDefaults: false });
const validPurchaseBody = ajv.compile<PurchaseRequest>(PURCHASE_BODY_SCHEMA);

/** What each field must be, as the refusal words it. */
const FIELD_RULES: Record<keyof PurchaseRequest, string> = {
  token: 'token must be a submit token from POST /api/sales/:id/tokens',
  quantity: `quantity must be an integer from 1 to ${SALE_LIMITS.maxQuantity}`,
};

function problemOf(error: ErrorObject): string {
  if (error.keyword === 'additionalProperties') {
    return `property ${(error.params as { additionalProperty: string }).additionalProperty} should not exist`;
  }
  const field = (
    error.keyword === 'required' ? (error.params as { missingProperty: string }).missingProperty : error.instancePath
  ).replace(/^\//, '') as keyof PurchaseRequest;
  return FIELD_RULES[field] ?? 'The request body must be a JSON object';
}

/** A purchase as the route hands it on: the body, its quantity defaulted. */
export interface PurchaseOrder {
  token: string;
  quantity: number;
}

/**
 * The purchase body as `{token, quantity}`, or `400 VALIDATION_FAILED` naming every problem
 * (docs/api.md, "Buying"). An absent body is read as `{}`, so the missing token is named.
 */
export function readPurchaseBody(body: unknown): PurchaseOrder {
  if (body instanceof UnreadableBody) throw body.toError();
  const candidate = body === undefined ? {} : body;
  if (validPurchaseBody(candidate)) return { token: candidate.token, quantity: candidate.quantity ?? 1 };
  if (candidate === null || typeof candidate !== 'object' || Array.isArray(candidate)) {
    throw new DomainError(ErrorCode.ValidationFailed, 'The request body must be a JSON object');
  }
  const problems = [...new Set((validPurchaseBody.errors ?? []).map(problemOf))];
  throw new DomainError(ErrorCode.ValidationFailed, problems.join('; '), { problems });
}
