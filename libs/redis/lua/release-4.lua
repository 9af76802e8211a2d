--[[
  Return a reservation's units to Redis (compensation), exactly once per order number.
  Used when MySQL refuses the order (FAILED) and, later, when an order is cancelled or expires.

  Input:
    KEYS[1] stock         string  units Redis can still sell
    KEYS[2] buyers        hash    <userId> -> units held, <userId>:slots -> slot bitmask
    KEYS[3] reservations  hash    orderNo -> "userId|quantity|slot|reservedAtMs"
    KEYS[4] returned      hash    orderNo -> quantity returned

    ARGV[1] orderNo
    ARGV[2] stock-returned channel: the sale id is published there when units come back, so API
            instances drop their local "sold out" flag for this sale (a channel, not a key)
    ARGV[3] saleId

  Output:
     1  units returned now
     0  already returned before (nothing changed)
    -1  no such reservation (nothing changed)
]]
local stockKey = KEYS[1]
local buyersKey = KEYS[2]
local reservationsKey = KEYS[3]
local returnedKey = KEYS[4]

local orderNo = ARGV[1]

local record = redis.call('HGET', reservationsKey, orderNo)
if not record then return -1 end
local userId, quantity, slot = string.match(record, '^([^|]*)|(%d+)|(%d+)|%d+$')
quantity = tonumber(quantity)
slot = tonumber(slot)

if redis.call('HSETNX', returnedKey, orderNo, quantity) == 0 then return 0 end

redis.call('INCRBY', stockKey, quantity)
redis.call('HINCRBY', buyersKey, userId, -quantity)
local slotsField = userId .. ':slots'
local slotMask = tonumber(redis.call('HGET', buyersKey, slotsField) or '0')
redis.call('HSET', buyersKey, slotsField, bit.band(slotMask, bit.bnot(bit.lshift(1, slot - 1))))
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
