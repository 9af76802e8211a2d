--[[
  The waiting room's rules, shared by its scripts (docs/architecture.md "The waiting room"). Every room
  script receives the same five keys, all under the room's hash tag:

    KEYS[1] meta      hash  admitPerSecond, maxShopping (0: no cap), passMs, startsMs, expireAtMs, and the
                            admission state: credit, lastMs, rate (measured admissions/s), seq, admitted,
                            sold (units its buyers bought, counted as each purchase ends its turn)
    KEYS[2] queue     zset  buyer -> place: before the opening a random draw in [0, 1) (the shuffle), after
                            it 1 + the join sequence (first come, first served behind the whole pre-queue)
    KEYS[3] shopping  zset  buyer -> pass expiry (ms): admitted, not done, pass unexpired; the cap counts these
    KEYS[4] admitted  hash  buyer -> pass expiry (ms): every admitted buyer whose turn is not over
    KEYS[5] polls     hash  buyer -> earliest next poll (ms)

  Time is Redis's (TIME): every API instance and its clock agree on the room's.
]]

-- How long the measured admission rate remembers (seconds): ETAs follow a change of rate within a few.
local RATE_MEMORY_S = 5
-- Admission runs at most this often (ms); a poll in between only reads, and the credit accrues meanwhile.
local ADMIT_EVERY_MS = 20
-- Admission credit never banks more than this many seconds of the rate: an idle room does not burst.
local MAX_CREDIT_S = 1
-- Poll advice (ms): a third of the buyer's ETA, between these bounds; for an admitted buyer; the jitter
-- (± fraction). Buyers poll more often the sooner their turn may come, before the opening too, so the
-- crowd does not poll all at once in its last seconds, and far-back buyers cost little.
local POLL_MIN_MS = 1000
local POLL_MAX_MS = 20000
local POLL_ADMITTED_MS = 5000
local POLL_JITTER = 0.2

local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function num(value, default)
  if value == false or value == nil then return default end
  return tonumber(value)
end

-- The room's settings and admission state, read once per call.
local function readRoom()
  local m = redis.call('HMGET', KEYS[1], 'admitPerSecond', 'maxShopping', 'passMs', 'startsMs', 'expireAtMs',
    'credit', 'lastMs', 'rate', 'seq', 'sold')
  if m[1] == false then return nil end
  return {
    admitPerSecond = tonumber(m[1]), maxShopping = num(m[2], 0), passMs = tonumber(m[3]),
    startsMs = tonumber(m[4]), expireAtMs = tonumber(m[5]), credit = num(m[6], 0), lastMs = num(m[7], nil),
    rate = num(m[8], nil), seq = num(m[9], 0), sold = num(m[10], 0),
  }
end

local function keepUntilExpiry(room, key)
  redis.call('PEXPIREAT', key, room.expireAtMs)
end

--[[
  Admits from the front of the queue what the room may admit now: the credit the rate earned since the
  last admission, no more than the cap leaves (maxShopping − shopping), and no more shoppers than units
  remain. `remaining` is the caller's reading of the sale's units, taken when the room's `sold` was
  `soldAtReading`: units bought since (on any API instance) are taken off it, so a reading that is a moment
  old never lets in a shopper for a unit already gone. Passes that expired stop counting as shopping first.
  Capacity not used because nobody waits is not banked; the measured rate counts capacity, not demand,
  so an ETA does not collapse when the queue runs empty for a moment.
]]
local function admit(room, now, remaining, soldAtReading)
  if now < room.startsMs then return end
  if room.lastMs and now - room.lastMs < ADMIT_EVERY_MS then return end
  local last = room.lastMs or room.startsMs
  local elapsedS = math.max(0, now - last) / 1000
  local rate = room.rate or room.admitPerSecond
  local credit = math.min(room.credit + elapsedS * room.admitPerSecond, math.max(1, room.admitPerSecond * MAX_CREDIT_S))
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  local shopping = redis.call('ZCARD', KEYS[3])
  local capacity = math.floor(credit)
  if room.maxShopping > 0 then capacity = math.min(capacity, room.maxShopping - shopping) end
  local unitsLeft = remaining - math.max(0, room.sold - soldAtReading)
  capacity = math.max(0, math.min(capacity, unitsLeft - shopping))
  local admitted = 0
  if capacity > 0 then
    local popped = redis.call('ZPOPMIN', KEYS[2], capacity)
    local passExpiry = now + room.passMs
    for i = 1, #popped, 2 do
      redis.call('ZADD', KEYS[3], passExpiry, popped[i])
      redis.call('HSET', KEYS[4], popped[i], passExpiry)
      admitted = admitted + 1
    end
    if admitted > 0 then
      keepUntilExpiry(room, KEYS[3])
      keepUntilExpiry(room, KEYS[4])
      redis.call('HINCRBY', KEYS[1], 'admitted', admitted)
    end
    credit = credit - capacity
  end
  rate = rate * math.exp(-elapsedS / RATE_MEMORY_S) + capacity / RATE_MEMORY_S
  room.rate = rate
  redis.call('HSET', KEYS[1], 'credit', tostring(credit), 'lastMs', now, 'rate', tostring(rate))
end

-- The rate an ETA assumes: the measured one, or the configured one before anything was measured.
local function etaRate(room)
  local rate = room.rate or room.admitPerSecond
  if rate < 0.01 then rate = 0.01 end
  return rate
end

local function jittered(ms, draw)
  return math.floor(ms * (1 - POLL_JITTER + 2 * POLL_JITTER * draw))
end

local function pollAdvice(etaMs, draw)
  return jittered(math.min(POLL_MAX_MS, math.max(POLL_MIN_MS, math.floor(etaMs / 3))), draw)
end

-- When the buyer's pass expires (ms), or nil if they hold none.
local function passExpiryOf(buyer)
  return num(redis.call('HGET', KEYS[4], buyer), nil)
end

-- A place as a string of every digit a double has (a Lua number in a reply would be cut to an integer).
local function placeString(place)
  return string.format('%.17g', place)
end

--[[
  A buyer's ticket: {state, position, etaMs, pollAfterMs, passExpiresMs, waiting, place}, or nil if they
  are neither admitted (`passExpiry` unexpired) nor in line. `position` is 0 before the opening (not drawn
  yet). `place` is the buyer's score in the line ('' when admitted): the caller records it in MySQL
  (room_places) before the buyer hears of it, so that a room Redis lost is rebuilt in the same order
  (room-restore-5.lua). `draw` in [0, 1) jitters the poll advice. Also records the earliest next poll
  (half the advice).
]]
local function ticket(room, now, buyer, draw, passExpiry)
  local waiting = redis.call('ZCARD', KEYS[2])
  local pollAfter
  local result
  if passExpiry and passExpiry > now then
    pollAfter = jittered(POLL_ADMITTED_MS, draw)
    result = { 'admitted', 0, 0, pollAfter, passExpiry, waiting, '' }
  elseif now < room.startsMs then
    local place = tonumber(redis.call('ZSCORE', KEYS[2], buyer))
    if place == nil then return nil end
    -- Not drawn yet: the expected place is the buyer's draw times the room's size.
    local untilOpen = room.startsMs - now
    local eta = untilOpen + math.floor(1000 * place * waiting / etaRate(room))
    pollAfter = pollAdvice(eta, draw)
    result = { 'waiting', 0, eta, pollAfter, 0, waiting, placeString(place) }
  else
    local rank = redis.call('ZRANK', KEYS[2], buyer)
    if rank == false then return nil end
    local position = rank + 1
    local eta = math.floor(1000 * position / etaRate(room))
    pollAfter = pollAdvice(eta, draw)
    result = { 'waiting', position, eta, pollAfter, 0, waiting, placeString(tonumber(redis.call('ZSCORE', KEYS[2], buyer))) }
  end
  redis.call('HSET', KEYS[5], buyer, now + math.floor(pollAfter / 2))
  return result
end

-- Puts a buyer in line: drawn at random before the opening, behind everyone after it.
local function enqueue(room, now, buyer, draw)
  local place
  if now < room.startsMs then
    place = draw
  else
    place = 1 + redis.call('HINCRBY', KEYS[1], 'seq', 1)
  end
  redis.call('ZADD', KEYS[2], place, buyer)
  keepUntilExpiry(room, KEYS[2])
end

-- A turn that ended without buying (its pass expired): the buyer's next poll or join queues them again.
local function endExpiredTurn(now, buyer, passExpiry)
  if passExpiry and passExpiry <= now then
    redis.call('HDEL', KEYS[4], buyer)
    return true
  end
  return false
end
