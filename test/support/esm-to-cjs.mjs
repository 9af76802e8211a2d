/**
 * Jest's transform for the scripts' ES modules (`scripts/lib/*.mjs`, Node built-ins only, shared with
 * `npm start` and the bench): jest's module system loads CommonJS only, so esbuild rewrites their
 * imports and exports on the way in.
 */
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
    });
    return { code, map };
  },
};
