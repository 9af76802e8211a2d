--[[
  Adds a lease's units to the sale's sellable balance, once per lease id (docs/architecture.md "Who owns the
  stock"). MySQL has already moved the units from `available` to `leased` under the lease's id; this
  hands them to Redis. Redis can only ever sell units granted this way, so a reload can never create
  stock.

  Input:
    KEYS[1] meta     hash    epoch: the Redis incarnation of the sale's state (written by load-7)
    KEYS[2] stock    string  units Redis can still sell (the balance)
    KEYS[3] grants   hash    leaseId -> units, every lease this incarnation was granted

    ARGV[1] epoch    the incarnation MySQL leased to; a grant for another one is refused
    ARGV[2] leaseId
    ARGV[3] units
    ARGV[4] stock-added channel: the sale id is published there, so API instances drop their local
            "sold out" flag for the sale (a channel, not a key)
    ARGV[5] saleId

  Output:
    {  1, balance }  granted now
    {  0, balance }  this lease was granted before (nothing changed)
    -1               the sale is not loaded, or Redis is on another incarnation (nothing changed:
                     the lease stays with its incarnation, in doubt, until reconciliation returns it)
]]
local metaKey = KEYS[1]
local stockKey = KEYS[2]
local grantsKey = KEYS[3]

local epoch = redis.call('HGET', metaKey, 'epoch')
if epoch ~= ARGV[1] then return -1 end

if redis.call('HSETNX', grantsKey, ARGV[2], ARGV[3]) == 0 then
  return { 0, tonumber(redis.call('GET', stockKey) or '0') }
end
local balance = redis.call('INCRBY', stockKey, tonumber(ARGV[3]))
redis.call('PUBLISH', ARGV[4], ARGV[5])
return { 1, balance }
