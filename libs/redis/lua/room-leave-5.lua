--[[
  A buyer's turn is done (bought, or refused for good): they stop counting against the room's cap. Their
  pass stays valid until it expires (a buyer with a limit above one may buy again with it). See
  includes/room.lua for the keys.

  Input:  ARGV[1] buyer (user id)
  Output: 1 if they were shopping, else 0
]]
return redis.call('ZREM', KEYS[3], ARGV[1])
