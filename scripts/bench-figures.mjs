#!/usr/bin/env node
// `npm run bench:figures`: writes the figures of bench/results/latest.json into the README and
// docs/performance.md (their `<!-- bench:… -->` blocks). `npm run bench` does it after every full run.
// `--check` writes nothing and exits 1 when a file's figures are not those of the results
// (test/docs/bench-figures.spec.ts runs it); `--root DIR` works on a copy of the repository's files there.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { writeFigureFiles } from '../bench/lib/report/figure-files.mjs';

const { values } = parseArgs({ options: { check: { type: 'boolean' }, root: { type: 'string' } } });
const root = values.root ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const check = values.check ?? false;
const results = JSON.parse(await readFile(path.join(root, 'bench/results/latest.json'), 'utf8'));
const stale = await writeFigureFiles(root, results, { check });
for (const file of stale) {
  if (check) {
    console.error(
      `[bench:figures] ${file}: its figures are not those of bench/results/latest.json (commit ` +
        `${results.app.commit}); run npm run bench:figures`,
    );
  } else {
    console.log(`[bench:figures] ${file}: figures of commit ${results.app.commit} written`);
  }
}
process.exitCode = check && stale.length > 0 ? 1 : 0;
