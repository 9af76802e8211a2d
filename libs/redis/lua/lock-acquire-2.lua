--[[
  Takes a sale's purchase lock if nobody holds it, and mints the grant's fencing token in the same
  step (docs/architecture.md "Strategies", redis-lock). The token grows with every grant, so MySQL can
  refuse a write from a holder whose lock ran out while it was paused and was granted to another.

  Input:
    KEYS[1] lock   string  the holder's owner value, with the lock's TTL
    KEYS[2] fence  string  the last fencing token granted (a counter; it never expires)

    ARGV[1] owner  a random value only this holder knows: renewal and release compare it
    ARGV[2] ttlMs  how long the lock lives unless its holder renews it
    ARGV[3] floor  a token MySQL has already seen (0 if none known): the grant's token is above it even
                   if the counter was lost (a Redis restart without its data), or MySQL would refuse
                   every holder from then on

  Output:
    token (>= 1)  granted; the fencing token of this grant
    0             another holder has it (nothing changed)
]]
local lockKey = KEYS[1]
local fenceKey = KEYS[2]

local owner = ARGV[1]
local ttlMs = tonumber(ARGV[2])
local floor = tonumber(ARGV[3])

if not redis.call('SET', lockKey, owner, 'NX', 'PX', ttlMs) then return 0 end
local token = redis.call('INCR', fenceKey)
if token <= floor then
  token = floor + 1
  redis.call('SET', fenceKey, token)
end
return token
