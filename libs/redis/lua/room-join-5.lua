--[[
  Joins a buyer to the sale's waiting room, or returns the ticket they hold (joining is idempotent: the
  same place). Runs the admission step first. See includes/room.lua for the keys.

  Input:
    ARGV[1] buyer (user id)
    ARGV[2] draw in [0, 1): the buyer's place if they join before the opening
    ARGV[3] units the sale has left (as the caller last read them)
    ARGV[4] draw in [0, 1) for the poll advice's jitter
    ARGV[5] the room's `sold` when the caller read ARGV[3]

  Output: 'no-room' (Redis holds no room for the sale: the caller configures it and retries), or the
  ticket {state, position, etaMs, pollAfterMs, passExpiresMs, waiting, place}
]]
--- @include "room"

local room = readRoom()
if room == nil then return 'no-room' end
local now = nowMs()
local buyer = ARGV[1]
admit(room, now, tonumber(ARGV[3]), tonumber(ARGV[5]))
local passExpiry = passExpiryOf(buyer)
if endExpiredTurn(now, buyer, passExpiry) then passExpiry = nil end
local joining = passExpiry == nil and redis.call('ZSCORE', KEYS[2], buyer) == false
if joining then enqueue(room, now, buyer, tonumber(ARGV[2])) end
local answer = ticket(room, now, buyer, tonumber(ARGV[4]), passExpiry)
if joining then keepUntilExpiry(room, KEYS[5]) end
return answer
