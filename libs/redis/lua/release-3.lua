--[[
  Frees a reservation's hold on its buyer, exactly once per order number: the buyer's units and
  purchase slot, so the per-user limit counts only what they still hold. Used when an order is
  FAILED, cancelled or expires. The units themselves are not given back here: MySQL owns them and
  returns them to the sale's `available` count, from where a new lease hands them to Redis again.

  Input:
    KEYS[1] buyers        hash    <userId> -> units held, <userId>:slots -> slot bitmask
    KEYS[2] reservations  hash    orderNo -> "userId|quantity|slot|reservedAtMs|epoch"
    KEYS[3] returned      hash    orderNo -> quantity returned

    ARGV[1] orderNo

  Output:
     1  released now
     0  already released before (nothing changed)
    -1  no such reservation (nothing changed)
]]
local buyersKey = KEYS[1]
local reservationsKey = KEYS[2]
local returnedKey = KEYS[3]

--- @include "reservation-record"
--- @include "buyers"

local orderNo = ARGV[1]

local record = redis.call('HGET', reservationsKey, orderNo)
if not record then return -1 end
local userId, quantity, slot = parseReservationRecord(record)

if redis.call('HSETNX', returnedKey, orderNo, quantity) == 0 then return 0 end

redis.call('HINCRBY', buyersKey, userId, -quantity)
local slotMask = tonumber(redis.call('HGET', buyersKey, slotsField(userId)) or '0')
redis.call('HSET', buyersKey, slotsField(userId), withoutSlot(slotMask, slot))
return 1
