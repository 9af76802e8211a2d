/**
 * The history of a run, in the manner of Jepsen: every client operation with the answer it got.
 * `ok`: a 2xx (a promise the system must keep); `fail`: a definite refusal (4xx), nothing happened;
 * `info`: unknown — a socket error, a timeout or a 503 — it may or may not have happened.
 */
export type Outcome = 'ok' | 'fail' | 'info';

export type OperationKind = 'buy' | 'replay' | 'settle' | 'pay' | 'cancel';

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

/** One line of a history entry, for a failure report. */
export function describe(operation: Operation): string {
  const answer =
    operation.outcome === 'info'
      ? `? ${operation.status ?? operation.error}`
      : `${operation.status} ${operation.orderNo ?? operation.code ?? ''}`;
  const what = isPurchase(operation)
    ? `token#${shortToken(operation.subject)} x${operation.quantity}`
    : `order ${operation.subject}`;
  return `#${operation.index} buyer${operation.buyer} ${operation.kind} ${what} via api${operation.api} -> ${answer.trim()}${
    operation.faultsActive ? ` [${operation.faultsActive}]` : ''
  }`;
}

export function shortToken(token: string): string {
  return token.slice(-6);
}
