--[[
  A reservation record, the value of a sale's `reservations` hash (orderNo -> record):
  "userId|quantity|slot|reservedAtMs|epoch", the epoch empty for an order MySQL sold itself.
  libs/redis/src/reservation-record.ts reads the same format.
]]

local function reservationRecord(userId, quantity, slot, reservedAtMs, epoch)
  return userId .. '|' .. quantity .. '|' .. slot .. '|' .. reservedAtMs .. '|' .. epoch
end

-- Returns userId, quantity, slot, reservedAtMs and epoch (nil when empty); numbers as numbers.
local function parseReservationRecord(record)
  local userId, quantity, slot, reservedAtMs, epoch = string.match(record, '^([^|]*)|(%d+)|(%d+)|(%d+)|(%d*)$')
  return userId, tonumber(quantity), tonumber(slot), tonumber(reservedAtMs), tonumber(epoch)
end
