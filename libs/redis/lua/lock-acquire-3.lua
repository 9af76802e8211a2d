--[[
  Takes a sale's purchase lock if nobody holds it, and mints the grant's fencing token in the same
  step (docs/architecture.md "Strategies", redis-lock). The token grows with every grant, so MySQL can
  refuse a write from a holder whose lock ran out while it was paused and was granted to another.

  Input:
    KEYS[1] lock   string  the holder's owner value, with the lock's TTL
    KEYS[2] fence  string  the last fencing token granted (a counter; it never expires)
    KEYS[3] pause  string  the demonstration's paused lock holder, armed for the sale's next grant (with
                           a TTL; absent unless an admin armed it: SaleLocks.armPause)

    ARGV[1] owner  a random value only this holder knows: renewal and release compare it
    ARGV[2] ttlMs  how long the lock lives unless its holder renews it
    ARGV[3] floor  a token MySQL has already seen (0 if none known): the grant's token is above it even
                   if the counter was lost (a Redis restart without its data), or MySQL would refuse
                   every holder from then on

  Output:
    {token, paused}  granted: the fencing token of this grant (>= 1), and 1 if this grant took the armed
                     pause (one grant takes it, on whichever API instance), else 0
    0                another holder has it (nothing changed)
]]
local lockKey = KEYS[1]
local fenceKey = KEYS[2]
local pauseKey = KEYS[3]

local owner = ARGV[1]
local ttlMs = tonumber(ARGV[2])
local floor = tonumber(ARGV[3])

if not redis.call('SET', lockKey, owner, 'NX', 'PX', ttlMs) then return 0 end
local token = redis.call('INCR', fenceKey)
if token <= floor then
  token = floor + 1
  redis.call('SET', fenceKey, token)
end
local paused = redis.call('DEL', pauseKey)
return {token, paused}
