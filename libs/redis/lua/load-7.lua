--[[
  Loads a sale into Redis as incarnation `epoch`, or refreshes the incarnation Redis already has
  (docs/architecture.md "Who owns the stock"). Safe to run mid-sale and safe to repeat.

  - Same epoch: a refresh. The balance and the grants stay as they are; MySQL's orders that Redis does
    not know (sold by the Redis-down fallback, say) are written in as reservations, with their submit
    tokens, so a replayed token finds its order on Redis too.
  - No state, or an older epoch (Redis lost data, or a stale copy was found): a new incarnation. The
    balance starts at 0 and the grants list is emptied: units granted to the old incarnation are in
    doubt and never sold again here; only leases granted to this epoch can be sold.
  - A newer epoch: Redis already moved on; nothing changes.
  The window (start, end, per-user limit) is written only if `windowVersion` is at least the one the
  bucket holds: an edit of the window writes a newer one first (set-window-1), and a load that read
  MySQL's row before that edit must not put the older window back.
  Either way the buyers hash (units, slots, order lists) is rebuilt from the reservations Redis has
  and MySQL's orders, so per-user limits survive a reload. An order that gave its units back
  (cancelled, expired, failed) is written in as returned: it holds nothing, but its submit token is
  spent, so a copy of Redis from before it was bought (which still holds the token unused) answers a
  replay of it with that order instead of reserving again.

  Input:
    KEYS[1] meta          hash    startsAtMs, endsAtMs, perUserLimit, windowVersion, stock, epoch,
                                  reservedUnits
    KEYS[2] stock         string  units Redis can still sell (the balance)
    KEYS[3] buyers        hash
    KEYS[4] reservations  hash    orderNo -> "userId|quantity|slot|reservedAtMs|epoch"
    KEYS[5] returned      hash    orderNo -> quantity returned
    KEYS[6] replays       hash    token -> orderNo
    KEYS[7] grants        hash    leaseId -> units

    ARGV[1] startsAtMs
    ARGV[2] endsAtMs
    ARGV[3] perUserLimit
    ARGV[4] stock (the sale's total)
    ARGV[5] epoch
    ARGV[6] stock-returned channel: when the load writes in orders Redis did not know, the sale id is
            published there, so API instances drop their local sold-out flags, whose list of buyers
            with an order to replay lacks them
    ARGV[7] the sale id (the message)
    ARGV[8] windowVersion (MySQL's `sales.window_version`, read with ARGV[1..3])
    ARGV[9..] MySQL's orders, 7 values each: orderNo, userId, quantity, slot, reservedAtMs,
              submitToken ('' when none), holding (1: PENDING_PAYMENT or PAID; 0: its units went back);
              those written in here have no epoch in their record

  Output:
    { 1, balance, added }  a new incarnation was opened; added = orders Redis did not know
    { 0, balance, added }  the incarnation was refreshed
    -1                     Redis is on a newer incarnation (nothing changed)
]]
local metaKey = KEYS[1]
local stockKey = KEYS[2]
local buyersKey = KEYS[3]
local reservationsKey = KEYS[4]
local returnedKey = KEYS[5]
local replaysKey = KEYS[6]
local grantsKey = KEYS[7]

--- @include "reservation-record"
--- @include "buyers"

local epoch = tonumber(ARGV[5])
local currentEpoch = tonumber(redis.call('HGET', metaKey, 'epoch') or '0')
if currentEpoch > epoch then return -1 end

local opened = 0
if currentEpoch < epoch then
  opened = 1
  redis.call('DEL', grantsKey)
  redis.call('SET', stockKey, 0)
  redis.call('HSET', metaKey, 'epoch', epoch, 'reservedUnits', 0)
end
local heldWindow = redis.call('HGET', metaKey, 'windowVersion')
if not heldWindow or tonumber(heldWindow) <= tonumber(ARGV[8]) then
  redis.call('HSET', metaKey, 'startsAtMs', ARGV[1], 'endsAtMs', ARGV[2], 'perUserLimit', ARGV[3],
    'windowVersion', ARGV[8])
end
redis.call('HSET', metaKey, 'stock', ARGV[4])

local added = 0
for i = 9, #ARGV, 7 do
  local orderNo = ARGV[i]
  if redis.call('HEXISTS', reservationsKey, orderNo) == 0 then
    redis.call('HSET', reservationsKey, orderNo, reservationRecord(ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ''))
    added = added + 1
  end
  if ARGV[i + 5] ~= '' then redis.call('HSETNX', replaysKey, ARGV[i + 5], orderNo) end
  if ARGV[i + 6] == '0' then redis.call('HSETNX', returnedKey, orderNo, ARGV[i + 2]) end
end

local returned = {}
local returnedFlat = redis.call('HGETALL', returnedKey)
for i = 1, #returnedFlat, 2 do returned[returnedFlat[i]] = true end

local units, slots, orders = {}, {}, {}
local reservations = redis.call('HGETALL', reservationsKey)
for i = 1, #reservations, 2 do
  local orderNo = reservations[i]
  local userId, quantity, slot = parseReservationRecord(reservations[i + 1])
  orders[userId] = orders[userId] and (orders[userId] .. ' ' .. orderNo) or orderNo
  if not returned[orderNo] then
    units[userId] = (units[userId] or 0) + quantity
    slots[userId] = withSlot(slots[userId] or 0, slot)
  end
end

redis.call('DEL', buyersKey)
for userId, orderList in pairs(orders) do
  redis.call('HSET', buyersKey, userId, units[userId] or 0, slotsField(userId), slots[userId] or 0,
    ordersField(userId), orderList)
end

if added > 0 then redis.call('PUBLISH', ARGV[6], ARGV[7]) end

return { opened, tonumber(redis.call('GET', stockKey) or '0'), added }
