import type { Session } from '@flash-sale/contract';

/**
 * Who is signed in, kept in the browser's localStorage: the shopper's session and the admin token
 * both survive a reload and are shared by every tab (a new tab must not ask to sign in again; the
 * `storage` event keeps open tabs in step, see use-session.ts). The admin token expires on the server.
 * A tiny external store so React reads it with useSyncExternalStore and every tab-local change renders.
 */
const GUEST_KEY = 'flashbuy.guest';
const ADMIN_KEY = 'flashbuy.admin';

export interface SessionState {
  guest: Session | null;
  adminToken: string | null;
}

type Listener = () => void;

function read<T>(storage: Storage, key: string): T | null {
  try {
    const raw = storage.getItem(key);
    return raw ? (JSON.parse(raw) as T) : null;
  } catch {
    return null; // a hand-edited or old value: treat as signed out
  }
}

function write(storage: Storage, key: string, value: unknown): void {
  if (value === null) storage.removeItem(key);
  else storage.setItem(key, JSON.stringify(value));
}

class SessionStore {
  private state: SessionState = this.load();
  private readonly listeners = new Set<Listener>();

  private load(): SessionState {
    return {
      guest: read<Session>(localStorage, GUEST_KEY),
      adminToken: read<string>(localStorage, ADMIN_KEY),
    };
  }

  readonly subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getSnapshot = (): SessionState => this.state;

  setGuest(guest: Session | null): void {
    write(localStorage, GUEST_KEY, guest);
    this.update({ ...this.state, guest });
  }

  setAdminToken(adminToken: string | null): void {
    write(localStorage, ADMIN_KEY, adminToken);
    this.update({ ...this.state, adminToken });
  }

  /** Another tab signed in or out: follow it. */
  reload(): void {
    this.update(this.load());
  }

  private update(next: SessionState): void {
    this.state = next;
    for (const listener of this.listeners) listener();
  }
}

export const sessionStore = new SessionStore();
