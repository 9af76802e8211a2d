--[[
  The purchase rate limits alone, for a purchase that does not reach the reservation script (a sold-out
  answer given locally, an invalid body, a MySQL-only strategy); reserve-9.lua counts them itself.

  Input:
    KEYS[1] the buyer's counter for this sale   string, INCR with a window TTL
    KEYS[2] the sale's counter                  string, INCR with a window TTL
    ARGV[1] purchases a user may attempt per window    ARGV[2] the user window, ms
    ARGV[3] purchases the sale takes per window        ARGV[4] the sale window, ms

  Output: 0 admitted, else the milliseconds until the refusing window ends.
]]
--- @include "purchase-limits"

return purchaseLimitWait(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]),
  tonumber(ARGV[4]))
