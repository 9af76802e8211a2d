--[[
  Extends a held lock's TTL, only for its owner (the watchdog of a holder that is still working).

  Input:
    KEYS[1] lock   string  the holder's owner value

    ARGV[1] owner  the value the holder set when it took the lock
    ARGV[2] ttlMs  the TTL from now

  Output:
    1  renewed
    0  the lock expired or another holder has it now (nothing changed): this holder lost it
]]
local lockKey = KEYS[1]

if redis.call('GET', lockKey) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', lockKey, tonumber(ARGV[2]))
return 1
