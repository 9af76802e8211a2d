--[[
  A sale's `buyers` hash: <userId> -> units held, <userId>:slots -> the buyer's purchase slots in use,
  <userId>:orders -> their order numbers, oldest first. The slots (1..perUserLimit) are a bitmask, bit k
  for slot k + 1; MySQL's unique index on (sale, user, slot) enforces the per-user limit on its own with
  the slot chosen here.
]]

local function slotsField(userId) return userId .. ':slots' end
local function ordersField(userId) return userId .. ':orders' end

local function slotBit(slot) return bit.lshift(1, slot - 1) end
local function withSlot(slotMask, slot) return bit.bor(slotMask, slotBit(slot)) end
local function withoutSlot(slotMask, slot) return bit.band(slotMask, bit.bnot(slotBit(slot))) end

local function lowestFreeSlot(slotMask)
  local slot = 1
  while bit.band(slotMask, slotBit(slot)) ~= 0 do slot = slot + 1 end
  return slot
end
