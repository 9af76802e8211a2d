// `npm run k6:bundle`: one plain-JavaScript file per k6 scenario, for k6 older than 0.57 (which cannot
// run TypeScript): load-tests/dist/<scenario>.js (git-ignored), run like the .ts:
// `k6 run load-tests/dist/flash-sale-burst.js`. `npm run k6 -- <scenario>` does this by itself when the
// installed k6 needs it (scripts/lib/k6-scenarios.mjs).
import path from 'node:path';
import { bundleScenarios, ROOT } from './lib/k6-scenarios.mjs';

for (const file of await bundleScenarios()) console.log(path.relative(ROOT, file));
