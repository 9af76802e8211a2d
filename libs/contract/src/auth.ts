/** Lengths of the sign-in bodies' fields. A wrong password of any length is a 401, not a 400. */
export const AUTH_LIMITS = {
  maxNameLength: 64,
  minPasswordLength: 8,
  maxPasswordLength: 128,
  maxAdminPasswordLength: 256,
} as const;

/** `POST /api/auth/guest`: a generated name when absent. */
export interface GuestSignInRequest {
  name?: string;
}

/** `POST /api/auth/admin`. */
export interface AdminSignInRequest {
  password: string;
}

/** `POST /api/auth/register`; with a guest's token the guest keeps its user id (and its orders). */
export interface RegisterRequest {
  name: string;
  password: string;
}

/** `POST /api/auth/login`. */
export interface LoginRequest {
  name: string;
  password: string;
}

/** `registered` tells a guest (whose account ends with its token) from an account. */
export interface SessionUser {
  id: string;
  name: string;
  registered: boolean;
}

/** `201` of the guest, register and login routes. */
export interface Session {
  token: string;
  user: SessionUser;
}

/** `201` of `POST /api/auth/admin`. */
export interface AdminSession {
  token: string;
}
