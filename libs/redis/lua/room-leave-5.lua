--[[
  A buyer's turn is done (bought, or refused for good): they stop counting against the room's cap. Their
  pass stays valid until it expires (a buyer with a limit above one may buy again with it). See
  includes/room.lua for the keys.

  Input:  ARGV[1] buyer (user id)
          ARGV[2] units they bought (0: refused), added to the room's `sold` (see admit in includes/room.lua)
  Output: 1 if they were shopping, else 0
]]
if tonumber(ARGV[2]) > 0 and redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'sold', ARGV[2])
end
return redis.call('ZREM', KEYS[3], ARGV[1])
