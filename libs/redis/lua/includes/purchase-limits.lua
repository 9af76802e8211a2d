--[[
  The purchase rate limits: per user (per sale) and per sale, fixed windows, counted together.
  Returns 0 when admitted, else the milliseconds until the refusing window ends (>= 1). A buyer over
  their own limit is refused before the sale's counter moves, so one client's flood cannot spend the
  sale's budget for everyone else.
]]
local function purchaseLimitWait(userKey, saleKey, userLimit, userWindowMs, saleLimit, saleWindowMs)
  local userCount = redis.call('INCR', userKey)
  if userCount == 1 then redis.call('PEXPIRE', userKey, userWindowMs) end
  if userCount > userLimit then
    local wait = redis.call('PTTL', userKey)
    if wait < 0 then redis.call('PEXPIRE', userKey, userWindowMs); wait = userWindowMs end
    return wait
  end

  local saleCount = redis.call('INCR', saleKey)
  if saleCount == 1 then redis.call('PEXPIRE', saleKey, saleWindowMs) end
  if saleCount > saleLimit then
    local wait = redis.call('PTTL', saleKey)
    if wait < 0 then redis.call('PEXPIRE', saleKey, saleWindowMs); wait = saleWindowMs end
    return wait
  end
  return 0
end
