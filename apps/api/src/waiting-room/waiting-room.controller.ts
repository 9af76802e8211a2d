import type { Ticket, WaitingRoomState } from '@flash-sale/contract';
import { Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/auth-user';
import { AdminOnly, Authenticated, CurrentUser } from '../auth/auth.guard';
import { RateLimit } from '../protection/rate-limit.interceptor';
import { WaitingRoom } from './waiting-room.service';

/** The joins' and polls' route as Fastify knows it (the access log samples it: ops/logging.ts). */
export const WAITING_ROOM_ROUTE = '/api/sales/:id/queue';

/**
 * Joining a sale's waiting room (docs/api.md "The waiting room"). The poll, on the same path, is served
 * by Fastify directly (waiting-room-poll.route.ts); it is not rate limited: the room's own script refuses
 * a poll sooner than its advice, in the same round trip.
 */
@Controller('sales/:id/queue')
@ApiTags('Waiting room')
@Authenticated()
export class WaitingRoomController {
  constructor(private readonly room: WaitingRoom) {}

  @Post()
  @RateLimit('queue-join')
  @HttpCode(HttpStatus.CREATED)
  join(@CurrentUser() user: AuthUser, @Param('id') saleId: string): Promise<Ticket> {
    return this.room.join(user.id, saleId);
  }
}

/** The room's live state for the admin console. */
@Controller('admin/sales/:id/queue')
@ApiTags('Waiting room')
@AdminOnly()
export class AdminWaitingRoomController {
  constructor(private readonly room: WaitingRoom) {}

  @Get()
  state(@Param('id') saleId: string): Promise<WaitingRoomState> {
    return this.room.state(saleId);
  }
}
