import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { FIGURE_FILES, figureBlocksIn, renderFigureBlocks } from '../../bench/lib/report/doc-figures.mjs';

const ROOT = join(__dirname, '../..');
const latest = () => JSON.parse(readFileSync(join(ROOT, 'bench/results/latest.json'), 'utf8'));

describe('the figures the README and docs/performance.md show', () => {
  // A child process: Prettier, which formats the files as the repository does, loads its core as an ES
  // module, which jest's module system cannot.
  const checkFigures = (root = ROOT) =>
    spawnSync(process.execPath, ['scripts/bench-figures.mjs', '--check', '--root', root], {
      cwd: ROOT,
      encoding: 'utf8',
    });

  it('are those of the committed bench results, as `npm run bench:figures` writes them', () => {
    const checked = checkFigures();
    expect(checked.stderr).toBe('');
    expect(checked.status).toBe(0);
  });

  it('fail that check once a figure is changed by hand', () => {
    const copy = mkdtempSync(join(tmpdir(), 'bench-figures-'));
    try {
      for (const file of ['README.md', 'docs/performance.md', 'bench/results/latest.json', '.prettierrc.json']) {
        mkdirSync(dirname(join(copy, file)), { recursive: true });
        copyFileSync(join(ROOT, file), join(copy, file));
      }
      expect(checkFigures(copy).status).toBe(0);
      const readme = readFileSync(join(copy, 'README.md'), 'utf8');
      const figure = /\*\*([\d,]+) purchases a second\*\*/.exec(readme);
      expect(figure).not.toBeNull();
      writeFileSync(join(copy, 'README.md'), readme.replace(figure![0], `**${figure![1]}1 purchases a second**`));
      const checked = checkFigures(copy);
      expect(checked.status).toBe(1);
      expect(checked.stderr).toContain('README.md: its figures are not those of bench/results/latest.json');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('name the commit and the figures of the run they come from', () => {
    const results = latest();
    const blocks = figureBlocksIn(
      readFileSync(join(ROOT, 'docs/performance.md'), 'utf8'),
      FIGURE_FILES['docs/performance.md'],
    );
    expect(blocks['measured-on']).toContain(`commit ${results.app.commit}`);
    for (const strategy of results.strategies) expect(blocks['strategies']).toContain(`\`${strategy.strategy}\``);
  });

  it('change with the results: another run gives other figures', () => {
    const results = latest();
    const live = results.scenarios.find((s: { key: string }) => s.key === 'live');
    const before = renderFigureBlocks(results);
    live.reqPerSec += 1_000;
    const after = renderFigureBlocks(results);
    expect(after['numbers']).not.toBe(before['numbers']);
    expect(after['how-fast']).not.toBe(before['how-fast']);
  });

  it('refuse a strategy the docs cannot explain', () => {
    const results = latest();
    results.strategies.push({ ...results.strategies[0], strategy: 'a-new-strategy' });
    expect(() => renderFigureBlocks(results)).toThrow(/why a-new-strategy costs/);
  });
});
