/**
 * A section run alone (`--only scale`, `--only opening`): its targets and tables, printed and written to
 * bench/results/<name>.{md,json} instead of latest.*.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { RESULTS_DIR, log } from '../settings.mjs';
import { targetVerdict } from './targets.mjs';

/** `title`: the section's name in the heading; `targets`, `section`: its targets and markdown lines. */
export function writeSectionReport(results, { name, title, targets, section }) {
  results.targets = targets(results);
  results.finishedAt = new Date().toISOString();
  for (const t of results.targets) log(`target ${targetVerdict(t)}: ${t.name} — ${t.measured}`);
  const m = results.machine;
  const markdown = [
    `# Purchase benchmark, ${title} alone — ${results.finishedAt}`,
    '',
    `Machine: ${m.cpuModel} × ${m.cpuCount}, Node ${m.node}; load average at start ` +
      `${m.loadAverageAtStart.join(' / ')}. App commit ${results.app.commit}, dist built ${results.app.distBuiltAt}.`,
    '',
    '## Targets',
    '',
    '| target | measured | result |',
    '|---|---|---|',
    ...results.targets.map((t) => `| ${t.name} | ${t.measured} | **${targetVerdict(t)}** |`),
    '',
    ...section(results),
    `Checks: ${results.checks.map((c) => `${c.pass ? 'PASS' : 'FAIL'} ${c.name}`).join('; ')}.`,
    '',
  ].join('\n');
  console.log(`\n${markdown}`);
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(path.join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(RESULTS_DIR, `${name}.md`), markdown);
  log(`wrote bench/results/${name}.{json,md}`);
  return results.checks.every((c) => c.pass) ? 0 : 1;
}
