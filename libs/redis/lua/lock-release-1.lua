--[[
  Releases a lock, only for its owner: a holder whose lock expired and was taken by another must not
  delete the other's lock (compare-and-delete, never a plain DEL).

  Input:
    KEYS[1] lock   string  the holder's owner value

    ARGV[1] owner  the value the holder set when it took the lock

  Output:
    1  released
    0  not this owner's lock any more (nothing changed)
]]
local lockKey = KEYS[1]

if redis.call('GET', lockKey) ~= ARGV[1] then return 0 end
redis.call('DEL', lockKey)
return 1
