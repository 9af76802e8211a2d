--[[
  Load (or reload) a sale into Redis so that Redis never sells a unit MySQL already holds
  (DESIGN.md step 1). Safe to run mid-sale and safe to repeat.

  The units taken are the union, by order number, of
    - reservations Redis already has that were not returned, and
    - holding orders MySQL has (passed in ARGV) that Redis does not know (e.g. after Redis lost data);
  those are written back as reservations. Sellable stock = stock - units taken. The buyers hash
  (units, slots, order lists) is rebuilt from the same union, so per-user limits survive a reload.
  Runs atomically: a purchase cannot slip between the count and the new stock value.

  Input:
    KEYS[1] meta          hash
    KEYS[2] stock         string
    KEYS[3] buyers        hash
    KEYS[4] reservations  hash    orderNo -> "userId|quantity|slot|reservedAtMs"
    KEYS[5] returned      hash    orderNo -> quantity returned

    ARGV[1] startsAtMs
    ARGV[2] endsAtMs
    ARGV[3] perUserLimit
    ARGV[4] stock (the sale's total)
    ARGV[5..] MySQL holding orders, 5 values each: orderNo, userId, quantity, slot, reservedAtMs

  Output:
    { sellable, unitsTaken }
]]
local metaKey = KEYS[1]
local stockKey = KEYS[2]
local buyersKey = KEYS[3]
local reservationsKey = KEYS[4]
local returnedKey = KEYS[5]

local totalStock = tonumber(ARGV[4])
redis.call('HSET', metaKey, 'startsAtMs', ARGV[1], 'endsAtMs', ARGV[2], 'perUserLimit', ARGV[3],
  'stock', ARGV[4])

for i = 5, #ARGV, 5 do
  local orderNo = ARGV[i]
  if redis.call('HEXISTS', reservationsKey, orderNo) == 0 then
    redis.call('HSET', reservationsKey, orderNo,
      ARGV[i + 1] .. '|' .. ARGV[i + 2] .. '|' .. ARGV[i + 3] .. '|' .. ARGV[i + 4])
  end
end

local returned = {}
local returnedFlat = redis.call('HGETALL', returnedKey)
for i = 1, #returnedFlat, 2 do returned[returnedFlat[i]] = true end

local units, slots, orders = {}, {}, {}
local unitsTaken = 0
local reservations = redis.call('HGETALL', reservationsKey)
for i = 1, #reservations, 2 do
  local orderNo = reservations[i]
  local userId, quantity, slot = string.match(reservations[i + 1], '^([^|]*)|(%d+)|(%d+)|%d+$')
  orders[userId] = orders[userId] and (orders[userId] .. ' ' .. orderNo) or orderNo
  if not returned[orderNo] then
    quantity = tonumber(quantity)
    unitsTaken = unitsTaken + quantity
    units[userId] = (units[userId] or 0) + quantity
    slots[userId] = bit.bor(slots[userId] or 0, bit.lshift(1, tonumber(slot) - 1))
  end
end

redis.call('DEL', buyersKey)
for userId, orderList in pairs(orders) do
  redis.call('HSET', buyersKey, userId, units[userId] or 0, userId .. ':slots', slots[userId] or 0,
    userId .. ':orders', orderList)
end

local sellable = math.max(0, totalStock - unitsTaken)
redis.call('SET', stockKey, sellable)
return { sellable, unitsTaken }
