/**
 * Jest's transform for the scripts' ES modules (`scripts/lib/*.mjs`, Node built-ins only, shared with
 * `npm start` and the bench): jest's module system loads CommonJS only, so esbuild rewrites their
 * imports and exports (and `import.meta.url`) on the way in.
 */
import { pathToFileURL } from 'node:url';
import { transformSync } from 'esbuild';

export default {
  process(source, filename) {
    const { code, map } = transformSync(source, {
      format: 'cjs',
      loader: 'js',
      platform: 'node',
      target: 'node20',
      sourcefile: filename,
      sourcemap: 'external',
      // CommonJS has no import.meta: the file's own URL, as Node would give it.
      define: { 'import.meta.url': JSON.stringify(pathToFileURL(filename).href) },
    });
    return { code, map };
  },
};
