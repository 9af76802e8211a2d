import { ErrorCode } from '@flash-sale/contract';
import { ApiError } from '../api/api-error';
import { sessionStore } from '../session/session-store';

/**
 * Runs an admin API call with the signed-in admin's token. Admin tokens expire: a 401 means this one
 * has, so it is dropped and AdminLayout shows the sign-in again instead of a page of failed requests.
 * Every admin query and mutation goes through here, so that rule lives in one place.
 */
export async function asAdmin<T>(call: (adminToken: string) => Promise<T>): Promise<T> {
  const adminToken = sessionStore.getSnapshot().adminToken;
  if (!adminToken) throw new ApiError(401, ErrorCode.Unauthenticated, 'Admin sign-in needed');
  try {
    return await call(adminToken);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) sessionStore.setAdminToken(null);
    throw error;
  }
}
