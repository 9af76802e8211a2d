export type Role = 'guest' | 'admin';

/** Who is calling, as read from a verified JWT. */
export interface AuthUser {
  id: string;
  name: string;
  role: Role;
}
