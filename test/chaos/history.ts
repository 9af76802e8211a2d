/**
 * The history of a run, in the manner of Jepsen: every client operation with the answer it got.
 * `ok`: a 2xx (a promise the system must keep); `fail`: a definite refusal (4xx), nothing happened;
 * `info`: unknown — a socket error, a timeout or a 503 — it may or may not have happened.
 */
export type Outcome = 'ok' | 'fail' | 'info';

export type OperationKind = 'buy' | 'replay' | 'settle' | 'pay' | 'cancel' | 'mint' | RoomActionKind | AdminActionKind;

/** A buyer's call on the sale's waiting room (test/chaos/room-clients.ts). */
export type RoomActionKind = 'join' | 'poll';

/**
 * An admin's action on the run's sale (test/chaos/admin-actions.ts); `room`: the sale's waiting room
 * changed, removed or added (`PATCH waitingRoom`).
 */
export type AdminActionKind = 'end' | 'reopen' | 'edit' | 'preload' | 'room';

/** A sale's waiting room as the explorer sets it (docs/api.md "The waiting room"). */
export interface RoomSettings {
  admitPerSecond: number;
  maxShopping?: number;
  passSeconds: number;
}

/** What a join or poll answered: the ticket's state, and its pass's expiry (ms) once admitted. */
export interface TicketSeen {
  state: string;
  position?: number;
  pollAfterMs?: number;
  passExpiresAt?: number;
}

export interface Operation {
  index: number;
  kind: OperationKind;
  /** Which API instance answered. */
  api: number;
  buyer: number;
  /** The submit token (buy, replay, settle) or the order number (pay, cancel). */
  subject: string;
  quantity?: number;
  outcome: Outcome;
  status?: number;
  code?: string;
  orderNo?: string;
  error?: string;
  /** What the run was doing to the system when the answer came (e.g. "redis down"). */
  faultsActive: string;
  /** Wall-clock instants (ms) the request was sent and its answer (or error) came: the answer rules judge them. */
  sentAt: number;
  answeredAt: number;
  /** Sent by the crowd (test/chaos/crowd.ts) rather than by a schedule command. */
  crowd?: boolean;
  /** A purchase's 2xx: the order's status its body carried (`QUEUED`, `PENDING_PAYMENT`, `CANCELLED`…). */
  orderStatus?: string;
  /** A join's or poll's 2xx: the ticket. */
  ticket?: TicketSeen;
  /** A submit token request: the admission pass sent with it (its expiry), or none. */
  pass?: { expiresAt: number } | 'none';
  /** An admin's `room` action: the room it asked for (`null`: removed). */
  room?: RoomSettings | null;
  /** The answering API process' clock offset (ms) when it runs skewed (clock-skew), else absent. */
  skewMs?: number;
}

export class History {
  readonly operations: Operation[] = [];

  record(operation: Omit<Operation, 'index'>): Operation {
    const entry = { ...operation, index: this.operations.length };
    this.operations.push(entry);
    return entry;
  }

  /** Operations on one submit token, in order. */
  ofToken(token: string): Operation[] {
    return this.operations.filter((operation) => operation.subject === token && isPurchase(operation));
  }

  get answersChecked(): number {
    return this.operations.length;
  }
}

export function isPurchase(operation: Operation): boolean {
  return operation.kind === 'buy' || operation.kind === 'replay' || operation.kind === 'settle';
}

export function isAdminAction(operation: Operation): boolean {
  return (
    operation.kind === 'end' ||
    operation.kind === 'reopen' ||
    operation.kind === 'edit' ||
    operation.kind === 'preload' ||
    operation.kind === 'room'
  );
}

export function isRoomCall(operation: Operation): boolean {
  return operation.kind === 'join' || operation.kind === 'poll';
}

/** Answers by status (`503`, `410 SOLD_OUT`, `? ECONNRESET`…), for a run's progress line. */
export function answersByStatus(operations: readonly Operation[]): string {
  const counts = new Map<string, number>();
  for (const operation of operations) {
    const key =
      operation.status === undefined ? '?' : `${operation.status}${operation.code ? ` ${operation.code}` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts]
    .sort(([, a], [, b]) => b - a)
    .map(([key, n]) => `${key}: ${n}`)
    .join(', ');
}

/** One line of a history entry, for a failure report. */
export function describe(operation: Operation): string {
  const ticket = operation.ticket;
  const answer =
    operation.outcome === 'info'
      ? `? ${operation.status ?? operation.error}`
      : ticket
        ? `${operation.status} ${ticket.state}${ticket.position ? ` #${ticket.position}` : ''}${
            ticket.passExpiresAt ? ` pass until ${instant(ticket.passExpiresAt)}` : ''
          }`
        : `${operation.status} ${operation.orderNo ?? operation.code ?? ''}${operation.orderStatus ? ` ${operation.orderStatus}` : ''}`;
  const what = isPurchase(operation)
    ? `token#${shortToken(operation.subject)} x${operation.quantity}`
    : isAdminAction(operation) || isRoomCall(operation)
      ? operation.subject
      : operation.kind === 'mint'
        ? `token ${operation.pass === 'none' || !operation.pass ? 'without a pass' : `with a pass until ${instant(operation.pass.expiresAt)}`}`
        : `order ${operation.subject}`;
  const who = isAdminAction(operation) ? 'admin' : `buyer${operation.buyer}${operation.crowd ? ' (crowd)' : ''}`;
  const when = `${instant(operation.sentAt)} +${operation.answeredAt - operation.sentAt}ms`;
  return `#${operation.index} ${who} ${operation.kind} ${what} via api${operation.api} -> ${answer.trim()} ${when}${
    operation.faultsActive ? ` [${operation.faultsActive}]` : ''
  }`;
}

export function shortToken(token: string): string {
  return token.slice(-6);
}

/** A wall-clock instant as the history prints it: seconds, modulo 1,000 s, to the millisecond. */
export function instant(ms: number): string {
  return `@${((ms % 1_000_000) / 1_000).toFixed(3)}s`;
}
