--[[
  Writes back what Redis lacks of a sale's room from MySQL's record of it (room_places), after Redis lost
  the room's data or came back from an older copy of it: every place and every pass the room gave, so the
  cap still counts each pass until it is spent or expires, and nobody is overtaken. It merges, and
  undoes nothing Redis holds: a buyer's place only ever moves back (a pass that expired unused queues them
  again, behind everyone), so of two places the later one stands. Safe to repeat, and to run in chunks.
  The room's settings must be written first (room-configure-5.lua). See includes/room.lua for the keys.

  Input:
    ARGV[1..] 4 values a buyer: user id, place, pass expiry (ms; 0: not admitted), bought (1: MySQL holds
              an order of theirs, so their pass is spent)

  Output: the number of buyers written back (a place or a pass Redis did not hold)
]]
--- @include "room"

local room = readRoom()
if room == nil then return 0 end
local now = nowMs()
local written = 0
local lastSeq = room.seq
for i = 1, #ARGV, 4 do
  local buyer = ARGV[i]
  local place = tonumber(ARGV[i + 1])
  local passExpiry = tonumber(ARGV[i + 2])
  local bought = ARGV[i + 3] == '1'
  local knownPass = redis.call('HEXISTS', KEYS[4], buyer) == 1
  if passExpiry > 0 then
    if not knownPass then
      redis.call('HSET', KEYS[4], buyer, passExpiry)
      redis.call('ZREM', KEYS[2], buyer)
      if passExpiry > now and not bought then redis.call('ZADD', KEYS[3], passExpiry, buyer) end
      redis.call('HINCRBY', KEYS[1], 'admitted', 1)
      written = written + 1
    end
  else
    -- A pass Redis holds that has expired since is over: the buyer was queued again, at this place.
    if knownPass and tonumber(redis.call('HGET', KEYS[4], buyer)) <= now then
      redis.call('HDEL', KEYS[4], buyer)
      knownPass = false
    end
    if not knownPass and redis.call('ZADD', KEYS[2], 'GT', 'CH', place, buyer) == 1 then written = written + 1 end
  end
  -- Places from 1 on are 1 + the join sequence: the next buyer to join goes behind every one of them.
  if place >= 1 and place - 1 > lastSeq then lastSeq = place - 1 end
end
if lastSeq > room.seq then redis.call('HSET', KEYS[1], 'seq', lastSeq) end
for i = 2, 5 do keepUntilExpiry(room, KEYS[i]) end
return written
