--[[
  The purchase rate limits alone, for a purchase of a verified caller that does not reach the
  reservation script (an invalid body, an unknown sale, a MySQL strategy, the Redis-down fallback);
  reserve-9.lua counts them itself. The local sold-out answer counts none (docs/api.md's sold-out
  exception). Not the per-user limit on units, which is the sale's rule (reserve-9.lua).

  Input:
    KEYS[1] the buyer's counter for this sale   string, INCR with a window TTL
    KEYS[2] the sale's counter                  string, INCR with a window TTL
    ARGV[1] purchases a user may attempt per window    ARGV[2] the user window, ms
    ARGV[3] purchases the sale takes per window        ARGV[4] the sale window, ms

  Output: 0 admitted, else the milliseconds until the refusing window ends.
]]
--- @include "purchase-rate-limits"

return purchaseRateLimitWait(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]),
  tonumber(ARGV[4]))
