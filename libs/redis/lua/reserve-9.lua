--[[
  Reserve units of a flash sale for one buyer and hand the order to the workers, atomically and in
  one round trip (docs/architecture.md "The purchase path", step 2): the one script a purchase costs.
  After the purchase rate limits (counted here, when the caller asks), it MIRRORS the purchase rules
  of libs/domain/src/purchase-rules.ts (decidePurchase), check for check and in the same order — the
  sale is live; the submit token is this buyer's (issued to them, or already bought for them: the
  idempotent replay); the buyer is under the per-user limit; stock is sufficient — because Lua cannot
  call TypeScript. A change to the rules is made there and here together; the cases in
  libs/domain/src/purchase-rules.cases.ts run against both (test/purchase/purchase-rules.int.spec.ts).
  Then it consumes the submit token, takes the units, marks the buyer, writes the reservation and
  appends it to the sale's hand-off stream, so no process can die between the reservation and its
  hand-off. The balance holds only units that leases granted to the sale's current incarnation
  (grant-lease-3), so Redis never sells a unit MySQL did not hand it.

  Input:
    KEYS[1] meta          hash    startsAtMs, endsAtMs, perUserLimit, stock, epoch (written by load-7);
                                  reservedUnits: units reserved in this incarnation, which lets
                                  reconciliation notice a stale copy of the sale's state
    KEYS[2] stock         string  units Redis can still sell (the leased balance)
    KEYS[3] buyers        hash    <userId> -> units held
                                  <userId>:slots  -> bitmask of purchase slots in use (bit k = slot k+1)
                                  <userId>:orders -> space-separated order numbers, oldest first
    KEYS[4] token         string  the submit token; value = the userId it was issued to; has a TTL
    KEYS[5] reservations  hash    orderNo -> "userId|quantity|slot|reservedAtMs|epoch"
                                  (epoch empty for an order MySQL sold itself)
    KEYS[6] replays       hash    token -> orderNo, so a replayed token finds its reservation
    KEYS[7] handoff       stream  entries {r = "orderNo|userId|quantity|slot|reservedAtMs|epoch|token"}
                                  the workers read through their consumer group and delete once written
    KEYS[8] user limit    string  the buyer's purchase counter in this sale (see purchase-rate-limits)
    KEYS[9] sale limit    string  the sale's purchase counter

    ARGV[1] userId    (no '|' or ' ', checked by the caller)
    ARGV[2] token
    ARGV[3] quantity  (integer >= 1, checked by the caller)
    ARGV[4] orderNo   (fresh, made by the caller)
    ARGV[5..8] the purchase limits: per-user points, user window ms, per-sale points, sale window ms;
              ARGV[5] = 0: already counted (a retry of the same purchase), skip them

  Output:
    { 1, orderNo, slot, reservedAtMs, quantity, epoch, balance, backlog }  reserved and handed off now;
                        balance = units left; backlog = entries in the hand-off stream (not written yet)
    { 2, orderNo, slot, reservedAtMs, quantity, epoch, balance, backlog }  this buyer already reserved
                        with this token: the same reservation (its quantity, whatever was asked now);
                        epoch 0 when MySQL sold it (the Redis-down fallback); nothing is appended
    { -8, waitMs }  rate limited: nothing else was looked at or changed
    -1  sale not loaded into Redis
    -2  sale not started
    -3  sale ended
    -4  token unknown, expired, or issued to another buyer or sale
    -5  per-user limit reached
    -6  sold out (fewer units left than asked for)
    -7  order number already used in this sale (the caller retries with a new one)

  The clock is Redis's own TIME, so every API instance judges the sale window by one clock.
]]
local metaKey = KEYS[1]
local stockKey = KEYS[2]
local buyersKey = KEYS[3]
local submitTokenKey = KEYS[4]
local reservationsKey = KEYS[5]
local replaysKey = KEYS[6]
local handoffKey = KEYS[7]

--- @include "purchase-rate-limits"
--- @include "reservation-record"
--- @include "buyers"

local userId = ARGV[1]
local submitToken = ARGV[2]
local quantity = tonumber(ARGV[3])
local orderNo = ARGV[4]

if ARGV[5] ~= '0' then
  local wait = purchaseRateLimitWait(KEYS[8], KEYS[9], tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]),
    tonumber(ARGV[8]))
  if wait > 0 then return { -8, wait } end
end

local meta = redis.call('HMGET', metaKey, 'startsAtMs', 'endsAtMs', 'perUserLimit', 'epoch')
if not meta[1] or not meta[4] then return -1 end

-- Rule 1, the window.
local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if nowMs < tonumber(meta[1]) then return -2 end
if nowMs >= tonumber(meta[2]) then return -3 end

-- Rules 2 and 3, the submit token, then the replay. A submit token that bought is consumed, so the
-- order it made (its buyer) decides for it; only one that has not bought is looked up itself.
local replayedOrderNo = redis.call('HGET', replaysKey, submitToken)
if replayedOrderNo then
  local boughtBy, reservedQuantity, slot, reservedAtMs, epoch =
    parseReservationRecord(redis.call('HGET', reservationsKey, replayedOrderNo))
  if boughtBy ~= userId then return -4 end
  return { 2, replayedOrderNo, slot, reservedAtMs, reservedQuantity, epoch or 0,
    tonumber(redis.call('GET', stockKey) or '0'), redis.call('XLEN', handoffKey) }
end
if redis.call('GET', submitTokenKey) ~= userId then return -4 end

-- Rule 4, the per-user limit.
local unitsHeld = tonumber(redis.call('HGET', buyersKey, userId) or '0')
if unitsHeld + quantity > tonumber(meta[3]) then return -5 end

-- Rule 5, the stock.
local stock = tonumber(redis.call('GET', stockKey) or '0')
if stock < quantity then return -6 end

if redis.call('HEXISTS', reservationsKey, orderNo) == 1 then return -7 end

-- The buyer holds fewer orders than units < limit, so a slot is free.
local slotMask = tonumber(redis.call('HGET', buyersKey, slotsField(userId)) or '0')
local slot = lowestFreeSlot(slotMask)

local orders = redis.call('HGET', buyersKey, ordersField(userId))

local balance = redis.call('DECRBY', stockKey, quantity)
redis.call('HINCRBY', metaKey, 'reservedUnits', quantity)
redis.call('HINCRBY', buyersKey, userId, quantity)
redis.call('HSET', buyersKey, slotsField(userId), withSlot(slotMask, slot),
  ordersField(userId), orders and (orders .. ' ' .. orderNo) or orderNo)
redis.call('DEL', submitTokenKey)
local record = reservationRecord(userId, quantity, slot, nowMs, meta[4])
redis.call('HSET', reservationsKey, orderNo, record)
redis.call('HSET', replaysKey, submitToken, orderNo)
-- The submit token goes last: it is the only field that could ever contain the separator.
redis.call('XADD', handoffKey, '*', 'r', orderNo .. '|' .. record .. '|' .. submitToken)
return { 1, orderNo, slot, nowMs, quantity, tonumber(meta[4]), balance, redis.call('XLEN', handoffKey) }
