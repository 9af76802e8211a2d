/**
 * The README and docs/performance.md with their figure blocks (doc-figures.mjs) from a run's results,
 * formatted as the repository formats Markdown: Prettier aligns the tables. Apart from doc-figures.mjs
 * because Prettier loads its core as an ES module, which the tests' module system cannot.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as prettier from 'prettier';
import { FIGURE_FILES, renderFigureBlocks, withFigureBlocks } from './doc-figures.mjs';

/** Each file as it reads now and as it reads with the figures of `results`: `{ file, current, regenerated }`. */
export async function regeneratedFigureFiles(root, results) {
  const blocks = renderFigureBlocks(results);
  return Promise.all(
    Object.entries(FIGURE_FILES).map(async ([file, names]) => {
      const absolute = path.join(root, file);
      const current = readFileSync(absolute, 'utf8');
      const options = { ...(await prettier.resolveConfig(absolute)), filepath: absolute };
      const regenerated = await prettier.format(withFigureBlocks(current, names, blocks), options);
      return { file, current, regenerated };
    }),
  );
}

/**
 * Writes the figures of `results` into the files (`check`: writes nothing); the files whose figures were
 * not those of `results`.
 */
export async function writeFigureFiles(root, results, { check = false } = {}) {
  const stale = [];
  for (const { file, current, regenerated } of await regeneratedFigureFiles(root, results)) {
    if (regenerated === current) continue;
    stale.push(file);
    if (!check) writeFileSync(path.join(root, file), regenerated);
  }
  return stale;
}
