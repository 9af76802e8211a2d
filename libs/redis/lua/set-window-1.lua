--[[
  Writes the sale's window, as MySQL holds it or narrowed for an edit in progress, into one bucket's
  meta (docs/failure-model.md "A sale's window"). Called only by the holder of the sale's window lock in
  MySQL, so it overwrites whatever version the bucket holds: a narrowed window whose edit MySQL then
  refused is put back this way.

  Input:
    KEYS[1] meta  hash  startsAtMs, endsAtMs, perUserLimit, windowVersion (see load-7, reserve-9)
    ARGV[1] startsAtMs
    ARGV[2] endsAtMs
    ARGV[3] perUserLimit
    ARGV[4] windowVersion
    ARGV[5] '1': only if the bucket's meta exists (a repair: an ended sale's expired keys stay gone);
            '0': always, so a load that read MySQL before the edit finds the newer version here

  Output: 1 written, 0 not (no meta, ARGV[5] = '1')
]]
if ARGV[5] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'startsAtMs', ARGV[1], 'endsAtMs', ARGV[2], 'perUserLimit', ARGV[3],
  'windowVersion', ARGV[4])
return 1
