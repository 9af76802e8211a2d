/** What every request may carry, whatever the route: a larger body is refused before it is parsed. */
export const REQUEST_LIMITS = {
  maxBodyBytes: 64 * 1024,
} as const;
