/** A TCP port nobody listens on right now on 127.0.0.1 (the OS picks it). */
export function freePort(): Promise<number>;
