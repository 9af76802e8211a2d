--[[
  The room's live state for the admin console (read only). See includes/room.lua for the keys.

  Output: 'no-room' | {waiting, shopping, admitted (since it opened), admitPerSecond, maxShopping,
  measured rate (string)}
]]
--- @include "room"

local room = readRoom()
if room == nil then return 'no-room' end
local now = nowMs()
local rate = room.rate or 0
if room.lastMs then rate = rate * math.exp(-math.max(0, now - room.lastMs) / 1000 / RATE_MEMORY_S) end
if now < room.startsMs then rate = 0 end
return {
  redis.call('ZCARD', KEYS[2]),
  redis.call('ZCOUNT', KEYS[3], '(' .. now, '+inf'),
  num(redis.call('HGET', KEYS[1], 'admitted'), 0),
  room.admitPerSecond,
  room.maxShopping,
  tostring(rate),
}
