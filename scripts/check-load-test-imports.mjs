// k6 fetches an `http(s)://` import when a script starts: on a machine without internet every scenario
// would fail before its first request. The load tests import only k6's modules and their own files.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '../load-tests');
const offenders = [];
const visit = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'results') visit(file);
    else if (/\.(ts|js|mjs)$/.test(entry.name)) {
      const source = readFileSync(file, 'utf8');
      for (const match of source.matchAll(/(?:import|from|require\()\s*['"](https?:\/\/[^'"]+)['"]/g)) {
        offenders.push(`${path.relative(root, file)}: ${match[1]}`);
      }
    }
  }
};
visit(root);
if (offenders.length > 0) {
  console.error(`Network imports in load-tests/ (k6 would need internet to start):\n  ${offenders.join('\n  ')}`);
  process.exit(1);
}
console.log('load-tests/: no network imports');
