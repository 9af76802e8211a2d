/**
 * Modules of load-tests/lib (TypeScript, pure: no k6 import at run time), compiled on the fly by esbuild
 * for Node: the bench replays the k6 scenarios' own shapes and judges with their own verdicts instead of
 * restating them.
 */
import { Buffer } from 'node:buffer';
import path from 'node:path';
import { build } from 'esbuild';
import { ROOT } from './app-dist.mjs';

/** The exports of `files` (names under load-tests/lib), bundled into one module. */
export async function importLoadTestsLib(files) {
  const out = await build({
    stdin: {
      contents: files.map((file) => `export * from './${file}';`).join('\n'),
      resolveDir: path.join(ROOT, 'load-tests/lib'),
      loader: 'ts',
    },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    external: ['k6', 'k6/*'],
  });
  return import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
}
