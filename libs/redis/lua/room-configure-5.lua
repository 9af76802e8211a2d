--[[
  Creates the sale's room or changes its settings (an admin's PATCH applies to the next admission), or,
  with ARGV[1] = 'remove', deletes it. The admission state (credit, measured rate, who waits) is kept
  across a change. See includes/room.lua for the keys.

  Input:
    ARGV[1] admitPerSecond | 'remove'
    ARGV[2] maxShopping (0: no cap)
    ARGV[3] passMs
    ARGV[4] startsMs (the opening)
    ARGV[5] expireAtMs: the room's keys live until then (after the sale's end)

  Output: 1
]]
if ARGV[1] == 'remove' then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
  return 1
end
redis.call('HSET', KEYS[1], 'admitPerSecond', ARGV[1], 'maxShopping', ARGV[2], 'passMs', ARGV[3],
  'startsMs', ARGV[4], 'expireAtMs', ARGV[5])
for i = 1, 5 do redis.call('PEXPIREAT', KEYS[i], ARGV[5]) end
return 1
