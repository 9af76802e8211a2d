/**
 * The waiting room (docs/api.md "The waiting room"): a sale created with `waitingRoom` admits its buyers
 * at a rate, under a cap of admitted buyers still shopping, and issues submit tokens only to buyers
 * holding an admission pass.
 */

/** A sale's room settings, as created or patched; `null` on a sale without a room. */
export interface WaitingRoomSettings {
  /** Buyers admitted per second. */
  admitPerSecond: number;
  /** Admitted buyers still shopping (not bought, not refused for good, pass unexpired); absent = no cap. */
  maxShopping?: number;
  /** How long an admission pass lets its buyer fetch submit tokens. */
  passSeconds: number;
}

/** What `waitingRoom` may hold in a create or `PATCH` body (`null` removes the room). */
export interface WaitingRoomRequest {
  admitPerSecond: number;
  maxShopping?: number;
  passSeconds?: number;
}

export const WAITING_ROOM_LIMITS = {
  minAdmitPerSecond: 1,
  maxAdmitPerSecond: 100_000,
  minPassSeconds: 10,
  maxPassSeconds: 3_600,
  maxMaxShopping: 10_000_000,
} as const;

export const WAITING_ROOM_DEFAULTS = { passSeconds: 120 } as const;

export const TICKET_STATES = ['waiting', 'admitted', 'sold_out', 'ended'] as const;
export type TicketState = (typeof TICKET_STATES)[number];

/** `201` of `POST /api/sales/:id/queue` and `200` of `GET /api/sales/:id/queue`: one buyer's place. */
export interface Ticket {
  state: TicketState;
  /** While waiting after the opening: 1 = next. Before the opening the order is not drawn yet. */
  position?: number;
  /** While waiting: seconds until admission, from the measured admission rate (and the opening). */
  estimatedWaitSeconds?: number;
  /** Poll again no sooner than this; a sooner poll may be answered `429` with `retry-after`. */
  pollAfterMs: number;
  /** When admitted: the signed admission pass `POST /api/sales/:id/tokens` takes. */
  pass?: string;
  passExpiresAt?: string;
  /** While waiting before the opening: when the order is drawn and admission begins. */
  opensAt?: string;
  /** Buyers in the room ahead of the admission (waiting), for a progress bar. */
  waiting?: number;
}

/** `200` of `GET /api/admin/sales/:id/queue`: the room's live state. */
export interface WaitingRoomState {
  waiting: number;
  admitted: number;
  shopping: number;
  admitPerSecond: number;
  maxShopping: number | null;
  /** Admissions per second measured over the last seconds. */
  measuredAdmitPerSecond: number;
  estimatedDrainSeconds: number;
}

/** `POST /api/sales/:id/tokens` on a sale with a room. */
export interface SubmitTokenRequest {
  pass: string;
}
