import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { OperationObject } from '@nestjs/swagger';
import type { FastifyInstance } from 'fastify';
import { AuthGuard } from '../auth/auth.guard';
import { sendError } from '../common/error.filter';
import { WAITING_ROOM_ROUTE } from './waiting-room.controller';
import { WaitingRoom } from './waiting-room.service';

/** The poll in the OpenAPI document (a controller does not serve it: it documents itself). */
export const ROOM_POLL_OPENAPI = {
  path: '/api/sales/{id}/queue',
  operation: {
    operationId: 'WaitingRoom_poll',
    summary: "The buyer's ticket in the sale's waiting room",
    description:
      'Needs a guest or admin token; without one, 401. No ticket: 404 (join first). Sooner than half of the ' +
      "last ticket's pollAfterMs: 429 with retry-after.",
    tags: ['Waiting room'],
    security: [{ bearer: [] }],
    parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
    responses: { '200': { description: 'Ticket (docs/api.md "The waiting room")' } },
  } satisfies OperationObject,
};

/**
 * `GET /api/sales/:id/queue`, the room's poll, served by Fastify directly as the purchase route is: the
 * whole waiting crowd calls it every few seconds, and Nest's guard, pipes, interceptors and filter would
 * be most of what it costs. The caller's token is checked before anything else (401), then the room
 * answers (WaitingRoom.poll). Joining (`POST`, once per buyer, rate limited) stays a Nest route.
 */
@Injectable()
export class WaitingRoomPollRoute implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly auth: AuthGuard,
    private readonly room: WaitingRoom,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.route<{ Params: { id: string } }>({
      method: 'GET',
      url: WAITING_ROOM_ROUTE,
      // A callback hook, not an async one: no promise per request for what is decided in line.
      onRequest: (request, reply, done) => {
        try {
          this.auth.callerOf(request);
        } catch (error) {
          sendError(request, reply, error);
          return;
        }
        done();
      },
      handler: async (request, reply) => {
        try {
          void reply.send(await this.room.poll(request.user!.id, request.params.id));
        } catch (error) {
          sendError(request, reply, error);
        }
        return reply;
      },
    });
  }
}
