import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RedisClient } from './redis-client';

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

/** A script as `defineScripts` registers it: its file in `libs/redis/lua` and how many of its arguments are keys. */
export interface ScriptFile {
  file: string;
  numberOfKeys: number;
}

/** The client, seen through the commands `defineScripts` gave it: keys first, then arguments. */
export type ScriptedClient<Name extends string> = Record<
  Name,
  (...keysThenArgs: (string | number)[]) => Promise<unknown>
>;

/**
 * Registers each script on the client under its name (ioredis's `defineCommand`: EVALSHA, with a
 * transparent EVAL fallback when Redis does not know the script yet) and returns the client as their
 * caller sees it. Each class that calls scripts registers its own, and no other class calls them.
 */
export function defineScripts<Name extends string>(
  client: RedisClient,
  scripts: Readonly<Record<Name, ScriptFile>>,
): ScriptedClient<Name> {
  for (const [name, script] of Object.entries<ScriptFile>(scripts)) {
    client.defineCommand(name, { numberOfKeys: script.numberOfKeys, lua: luaSource(script.file) });
  }
  return client as unknown as ScriptedClient<Name>;
}
