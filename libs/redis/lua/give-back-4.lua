--[[
  Gives units of a bucket's sellable balance back to MySQL (docs/architecture.md "Hot sales: buckets"):
  when a buyer's own bucket is empty and MySQL has nothing left to lease, the other buckets give back
  part of what they hold, MySQL takes it back into `available`, and a lease hands it to the buyer's
  bucket. The units leave the balance, are recorded under the caller's return key, and go into the
  bucket's hand-off stream in the same step, so a process that dies right after still has them applied
  to MySQL by a worker. Once per return key.

  Input:
    KEYS[1] meta       hash    epoch (written by load-7)
    KEYS[2] stock      string  units Redis can still sell (the balance)
    KEYS[3] givebacks  hash    returnKey -> "units|epoch"
    KEYS[4] handoff    stream  entries {g = "returnKey|units|epoch"} for the workers

    ARGV[1] epoch      the incarnation the caller read from MySQL; another one is refused
    ARGV[2] returnKey  unique per give-back (MySQL records it once)
    ARGV[3] maxUnits   at most this many units

  Output:
    { 1, units, entryId }  given back now, with the id of its hand-off entry (none when units is 0: the
                  balance was empty)
    { 0, units }  this return key gave back before (nothing changed)
    -1            the bucket is not loaded, or on another incarnation (nothing changed)
]]
local metaKey = KEYS[1]
local stockKey = KEYS[2]
local givebacksKey = KEYS[3]
local handoffKey = KEYS[4]

local epoch = redis.call('HGET', metaKey, 'epoch')
if epoch ~= ARGV[1] then return -1 end

local previous = redis.call('HGET', givebacksKey, ARGV[2])
if previous then return { 0, tonumber(string.match(previous, '^(%d+)|')) } end

local units = math.min(tonumber(redis.call('GET', stockKey) or '0'), tonumber(ARGV[3]))
if units <= 0 then return { 1, 0 } end
redis.call('DECRBY', stockKey, units)
local record = units .. '|' .. epoch
redis.call('HSET', givebacksKey, ARGV[2], record)
local entryId = redis.call('XADD', handoffKey, '*', 'g', ARGV[2] .. '|' .. record)
return { 1, units, entryId }
