import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const ARCHITECTURE = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
/** The doc as one line: its claims wrap across lines. */
const PROSE = ARCHITECTURE.replace(/\s*\n\s*/g, ' ');

/** The code spans (`…`) of the doc's text between `from` and the first `to` after it. */
function namesBetween(from: string, to: string): string[] {
  const start = PROSE.indexOf(from);
  if (start < 0) throw new Error(`docs/architecture.md no longer says "${from}"`);
  const end = PROSE.indexOf(to, start + from.length);
  if (end < 0) throw new Error(`docs/architecture.md: no "${to}" after "${from}"`);
  return [...PROSE.slice(start + from.length, end).matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
}

/** The source files of a folder, recursively, tests and build output aside. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name) && !/\.(spec|test)\.tsx?$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((file) => !file.includes(`${join('/', 'dist', '/')}`));
}

/** The folders of an app's src that hold a Nest module. */
function moduleFolders(app: string): string[] {
  const src = join(ROOT, 'apps', app, 'src');
  return readdirSync(src, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && readdirSync(join(src, entry.name)).some((f) => f.endsWith('.module.ts')))
    .map((entry) => entry.name)
    .sort();
}

/**
 * docs/architecture.md "The code: one home per concern" checked against the code it describes: a module
 * added, moved or renamed fails here until the page says so.
 */
describe('docs/architecture.md says where the code is, and the code agrees', () => {
  it('the API: each folder with a Nest module is a feature module the page names, and none it names is missing', () => {
    const named = namesBetween('one Nest module owning its controllers, services and DTOs:', '(`common`');
    expect([...named].sort()).toEqual(moduleFolders('api'));
  });

  it("the worker: the page's folders are the worker's modules", () => {
    const named = namesBetween('The worker has', 'Folders depend');
    expect(named.filter((name) => /^[a-z-]+$/.test(name)).sort()).toEqual(moduleFolders('worker'));
  });

  it.each([
    ['RedisModule', 'libs/redis/src/redis.module.ts', 'DbModule'],
    ['DbModule', 'libs/db/src/db.module.ts', 'StockModule'],
    ['StockModule', 'libs/stock/src/stock.module.ts', 'QueueModule'],
    ['QueueModule', 'libs/queue/src/queue.module.ts', 'AppConfigModule'],
  ])('%s provides every class the page lists for it', (module, file, next) => {
    // Class names (`PaymentRepository`), not the words in code spans beside them (`PAID`).
    const listed = namesBetween(`\`${module}\``, `\`${next}\``).filter((name) => /^[A-Z][a-z]\w*$/.test(name));
    expect(listed.length).toBeGreaterThan(0);
    const code = readFileSync(join(ROOT, file), 'utf8');
    expect(listed.filter((name) => !new RegExp(`\\b${name}\\b`).test(code))).toEqual([]);
  });

  it('each Lua script is registered only by the classes the page names, through the one helper', () => {
    const named = namesBetween('is registered (`defineScripts`) by', '(all in `libs/redis/src`;');
    const code = (file: string) => readFileSync(file, 'utf8');
    const registering = sources('libs/redis/src')
      .filter((file) => code(file).includes('defineScripts('))
      .filter((file) => !file.endsWith('lua-source.ts'))
      .map((file) => /export class (\w+)/.exec(code(file))?.[1]);
    expect(named.length).toBeGreaterThan(0);
    expect([...registering].sort()).toEqual([...named].sort());
    // ioredis's own registration, only inside the helper.
    const direct = sources('libs/redis/src').filter((file) => code(file).includes('defineCommand('));
    expect(direct.map((file) => file.slice(ROOT.length + 1))).toEqual(['libs/redis/src/lua-source.ts']);
  });

  it('every file path the page names in code spans exists', () => {
    const paths = [...ARCHITECTURE.matchAll(/`((?:apps|libs|test|load-tests|scripts|bench|deploy)\/[^`\s*]+)`/g)].map(
      (match) => match[1]!.replace(/[:#].*$/, ''),
    );
    expect(paths.length).toBeGreaterThan(20);
    expect(paths.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });
});
