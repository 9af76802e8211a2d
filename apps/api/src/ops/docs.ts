import type { INestApplication, Type } from '@nestjs/common';
import { GUARDS_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import {
  DocumentBuilder,
  type OpenAPIObject,
  type OperationObject,
  type SchemaObject,
  SwaggerModule,
} from '@nestjs/swagger';
import { AuthGuard, REQUIRED_ROLE } from '../auth/auth.guard';
import { PURCHASE_OPENAPI } from '../purchase/purchase.route';
import { ROOM_POLL_OPENAPI } from '../waiting-room/waiting-room-poll.route';

const DOCS_PATH = 'docs';
const BEARER = 'bearer';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/**
 * OpenAPI at /docs (UI) and /docs-json. DTOs document themselves with `@ApiProperty`; each controller
 * is a tag (swagger's `autoTagControllers`). Security is derived here from what the controllers already
 * declare — `AuthGuard` and the role it requires — so a new controller is documented correctly without
 * swagger decorators of its own. The prose contract (codes, statuses, precedence) is docs/api.md, and
 * test/ops/ops-docs.int.spec.ts checks that the two list the same routes with the same success statuses.
 */
export function installDocs(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('Flash sale API')
    .setDescription(
      'A flash sale that never oversells. Errors are always `{"error":{"code","message"}}` with the status of ' +
        'the contract (docs/api.md in the repository). Sign in with `POST /api/auth/guest` or `POST /api/auth/admin` and send the token ' +
        'as `Authorization: Bearer <token>`.',
    )
    .setVersion('0.1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, BEARER)
    .build();
  // Built on first request: by then every module (and every controller) is registered.
  SwaggerModule.setup(
    DOCS_PATH,
    app,
    () =>
      describeAccess(
        app,
        withPurchaseRoute(
          SwaggerModule.createDocument(app, config, {
            operationIdFactory: (controller, handler) => `${controller}_${handler}`,
          }),
        ),
      ),
    { customSiteTitle: 'Flash sale API' },
  );
}

/**
 * The purchase route and the waiting room's poll are served by Fastify, not by a controller: they document
 * themselves (purchase.route.ts, waiting-room-poll.route.ts).
 */
function withPurchaseRoute(document: OpenAPIObject): OpenAPIObject {
  const { path, operation, bodySchemaName, bodySchema } = PURCHASE_OPENAPI;
  document.paths[path] = { ...document.paths[path], post: operation };
  document.paths[ROOM_POLL_OPENAPI.path] = {
    ...document.paths[ROOM_POLL_OPENAPI.path],
    get: ROOM_POLL_OPENAPI.operation,
  };
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, [bodySchemaName]: bodySchema as SchemaObject },
  };
  return document;
}

function describeAccess(app: INestApplication, document: OpenAPIObject): OpenAPIObject {
  const controllers = new Map<string, Type>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      if (wrapper.metatype) controllers.set(wrapper.metatype.name, wrapper.metatype as Type);
    }
  }
  const tags = new Set<string>();
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const [controllerName = '', handler = ''] = (operation.operationId ?? '').split('_');
      operation.tags?.forEach((tag) => tags.add(tag));
      const controller = controllers.get(controllerName);
      if (controller) describeAuth(operation, controller, handler);
      operation.responses['default'] ??= {
        description: 'Refused: the error body of docs/api.md ("Conventions")',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
  }
  document.tags = [...tags].sort().map((name) => ({ name }));
  document.components = {
    ...document.components,
    schemas: {
      ...document.components?.schemas,
      Error: {
        type: 'object',
        required: ['error'],
        properties: {
          error: {
            type: 'object',
            required: ['code', 'message'],
            properties: {
              code: { type: 'string', example: 'SOLD_OUT' },
              message: { type: 'string', example: 'Sold out' },
              details: { type: 'object' },
            },
          },
        },
      },
    },
  };
  return document;
}

function describeAuth(operation: OperationObject, controller: Type, handler: string): void {
  // What @UseGuards / @Authenticated / @AdminOnly recorded on the handler and on its class.
  const method = (controller.prototype as Record<string, unknown>)[handler];
  const onHandler = (key: string): unknown =>
    typeof method === 'function' ? Reflect.getMetadata(key, method) : undefined;
  const guards = [
    ...((Reflect.getMetadata(GUARDS_METADATA, controller) as unknown[] | undefined) ?? []),
    ...((onHandler(GUARDS_METADATA) as unknown[] | undefined) ?? []),
  ];
  if (!guards.includes(AuthGuard)) return;
  operation.security = [{ [BEARER]: [] }];
  const role = onHandler(REQUIRED_ROLE) ?? Reflect.getMetadata(REQUIRED_ROLE, controller);
  const who = role === 'admin' ? 'an admin token (a guest token gets 403)' : 'a guest or admin token';
  operation.description = [operation.description, `Needs ${who}; without one, 401.`].filter(Boolean).join('\n\n');
}
