/**
 * The command-line manners every script of the repository keeps: `--help` prints its usage and exits 0;
 * an unknown or malformed option is one line that names it and how to get help, exit 2 — never a stack
 * trace. Node built-ins only (`npm start` runs before `npm install`).
 */
import { parseArgs } from 'node:util';

/**
 * `parseArgs` of `options` (plus `--help`) over `args`; returns its `values` and `positionals`.
 * `name` is the npm script (`demo` → "npm run demo -- --help").
 */
export function parseCommandLine({ name, usage, options, args = process.argv.slice(2), ...parseOptions }) {
  let parsed;
  try {
    parsed = parseArgs({ args, ...parseOptions, options: { ...options, help: { type: 'boolean', default: false } } });
  } catch (error) {
    console.error(`${name}: ${error.message} (npm run ${name} -- --help)`);
    process.exit(2);
  }
  if (parsed.values.help) {
    console.log(usage);
    process.exit(0);
  }
  return parsed;
}
