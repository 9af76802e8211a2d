import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Lua sources live in `libs/redis/lua`, one file per script, named `<name>-<numberOfKeys>.lua`; pieces
 * shared by several scripts live in `lua/includes` and are pulled in by a line `--- @include "<name>"`
 * (as BullMQ does), so a rule is written once however many scripts apply it.
 */
const LUA_DIR = join(__dirname, '..', 'lua');

export function luaSource(file: string): string {
  return readFileSync(join(LUA_DIR, file), 'utf8').replace(/^--- @include "([\w-]+)"$/gm, (_, name: string) =>
    readFileSync(join(LUA_DIR, 'includes', `${name}.lua`), 'utf8'),
  );
}
