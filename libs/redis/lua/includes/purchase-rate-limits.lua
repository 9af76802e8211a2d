--[[
  The purchase rate limits: per user (per sale) and per sale, fixed windows, counted together.
  purchaseRateLimitWait returns 0 when admitted, else the milliseconds until the refusing window ends
  (>= 1). A buyer over their own limit is refused before the sale's counter moves, so one client's
  flood cannot spend the sale's budget for everyone else.
]]

-- One fixed window: counts an attempt, returns 0 while within `limit`, else the wait.
local function windowWait(key, limit, windowMs)
  local count = redis.call('INCR', key)
  if count == 1 then redis.call('PEXPIRE', key, windowMs) end
  if count <= limit then return 0 end
  local wait = redis.call('PTTL', key)
  if wait < 0 then redis.call('PEXPIRE', key, windowMs); wait = windowMs end
  return wait
end

local function purchaseRateLimitWait(userKey, saleKey, userLimit, userWindowMs, saleLimit, saleWindowMs)
  local wait = windowWait(userKey, userLimit, userWindowMs)
  if wait > 0 then return wait end
  return windowWait(saleKey, saleLimit, saleWindowMs)
end
