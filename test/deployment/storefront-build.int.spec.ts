import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const LIB = pathToFileURL(join(__dirname, '..', '..', 'scripts', 'lib', 'storefront-build.mjs')).href;

interface BuildState {
  upToDate: boolean;
  digest: string;
  reason: string;
}

/** Calls the script library (an ES module of Node built-ins, as npm start loads it) in a node of its own. */
function callLib<T>(call: string): T {
  const code = `import * as lib from ${JSON.stringify(LIB)};\nconsole.log(JSON.stringify(${call} ?? null));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' })) as T;
}

/**
 * `npm start` and `npm test` run `vite build` only when the storefront's build is not that of its
 * current inputs (scripts/lib/storefront-build.mjs). On a small tree laid out like the repository's:
 * an unchanged tree (even touched) needs no build; any changed, added or removed input does; so does a
 * build that is missing or was replaced; installed packages and the build's own files are not inputs.
 */
describe('the storefront is rebuilt when, and only when, what it is built from changed', () => {
  let root: string;
  const state = () => callLib<BuildState>(`lib.storefrontBuildState(${JSON.stringify(root)})`);
  const record = (digest: string) =>
    callLib(`lib.recordStorefrontBuild(${JSON.stringify(root)}, ${JSON.stringify(digest)})`);
  const write = (file: string, content: string) => {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), content);
  };
  /** Builds (here: writes an index.html naming its assets) and records it, as npm start does after vite build. */
  const build = (assets = 'index-abc123.js') => {
    const before = state();
    write('apps/web/dist/index.html', `<script src="/assets/${assets}"></script>`);
    write(`apps/web/dist/assets/${assets}`, 'built');
    record(before.digest);
    expect(state()).toMatchObject({ upToDate: true, reason: 'unchanged since its last build' });
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'storefront-build-'));
    write('package.json', '{"name":"flash-sale"}');
    write('package-lock.json', '{"lockfileVersion":3}');
    write('apps/web/package.json', '{"name":"@flash-sale/web"}');
    write('apps/web/index.html', '<div id="root"></div>');
    write('apps/web/vite.config.ts', 'export default {};');
    write('apps/web/src/main.tsx', 'export const shop = 1;');
    write('apps/web/public/favicon.svg', '<svg/>');
    write('apps/web/node_modules/.vite/cache.json', '{}');
    write('libs/contract/src/index.ts', 'export const contract = 1;');
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('no build yet, or no record of one: build', () => {
    expect(state()).toMatchObject({ upToDate: false, reason: 'no build yet' });
    write('apps/web/dist/index.html', 'someone else built this');
    expect(state()).toMatchObject({ upToDate: false, reason: 'no record of what the build was made from' });
  });

  it('nothing changed, or only touched, or only what is not an input: no build', () => {
    build();
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, 'apps/web/src/main.tsx'), later, later);
    write('apps/web/node_modules/.vite/cache.json', '{"changed":true}');
    write('apps/web/dist/assets/extra.txt', 'not an input');
    expect(state()).toMatchObject({ upToDate: true });
  });

  it.each([
    ['a source edited', () => write('apps/web/src/main.tsx', 'export const shop = 2;')],
    ['a source added', () => write('apps/web/src/admin/new-page.tsx', 'export {};')],
    ['a source removed', () => unlinkSync(join(root, 'apps/web/public/favicon.svg'))],
    ['the Vite config edited', () => write('apps/web/vite.config.ts', 'export default { base: "/x/" };')],
    ['an .env file added', () => write('apps/web/.env', 'VITE_FLAG=1')],
    ['the contract edited', () => write('libs/contract/src/index.ts', 'export const contract = 2;')],
    ['the dependencies changed', () => write('package-lock.json', '{"lockfileVersion":3,"packages":{}}')],
  ])('%s: build', (_what, change) => {
    build();
    change();
    expect(state()).toMatchObject({ upToDate: false, reason: 'its sources changed' });
    build('index-def456.js'); // and once built again, it is current again
  });

  it('the build replaced or removed by something else: build', () => {
    build();
    write('apps/web/dist/index.html', '<script src="/assets/index-other.js"></script>');
    expect(state()).toMatchObject({ upToDate: false, reason: 'the build changed since' });
    rmSync(join(root, 'apps/web/dist'), { recursive: true });
    expect(state()).toMatchObject({ upToDate: false, reason: 'no build yet' });
  });
});
