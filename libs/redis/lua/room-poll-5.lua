--[[
  A buyer's poll of their ticket. Refused when sooner than half the last advice (nothing is changed
  then); otherwise runs the admission step and answers the ticket. A buyer whose pass expired unused is
  queued again, at the back. See includes/room.lua for the keys.

  Input:
    ARGV[1] buyer (user id)
    ARGV[2] units the sale has left (as the caller last read them)
    ARGV[3] draw in [0, 1) for the poll advice's jitter
    ARGV[4] the room's `sold` when the caller read ARGV[2]

  Output: 'no-room' | 'no-ticket' | {'too-soon', msToWait} | the ticket {state, position, etaMs,
  pollAfterMs, passExpiresMs, waiting, place}
]]
--- @include "room"

local room = readRoom()
if room == nil then return 'no-room' end
local now = nowMs()
local buyer = ARGV[1]
local earliest = num(redis.call('HGET', KEYS[5], buyer), nil)
if earliest and now < earliest then return { 'too-soon', earliest - now } end
admit(room, now, tonumber(ARGV[2]), tonumber(ARGV[4]))
local passExpiry = passExpiryOf(buyer)
if endExpiredTurn(now, buyer, passExpiry) then
  passExpiry = nil
  enqueue(room, now, buyer, 0)
end
local answer = ticket(room, now, buyer, tonumber(ARGV[3]), passExpiry)
if answer == nil then return 'no-ticket' end
return answer
