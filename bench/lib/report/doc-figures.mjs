/**
 * The figures the README and docs/performance.md show, generated from a bench run's results
 * (bench/results/latest.json) into the blocks those files mark with `<!-- bench:NAME -->` …
 * `<!-- /bench:NAME -->`. The bench writes them after every full run (`npm run bench:figures` again from
 * the committed results; figure-files.mjs), and test/docs/bench-figures.spec.ts fails when a block differs
 * from what the committed results give: a figure a reader sees is always one this build measured.
 */
import { percent, round, thousands } from '../format.mjs';
import { targetVerdict } from './targets.mjs';

/** Why each strategy costs what it costs: the strategy table's last column. A new strategy needs a line. */
const WHY = {
  'redis-lua': 'one script in Redis; the worker writes the orders',
  'db-batched': 'buyers wait a few ms to share one transaction on the sale row',
  'db-segmented': 'stock split into segments: buyers spread over several rows',
  'db-pessimistic': "buyers queue on the sale row's lock",
  'db-optimistic': 'conflicts cost retries; `503` + `retry-after` when they run out',
  'redis-lock': 'one buyer at a time under a Redis lock, with a fencing token',
  'redis-lock-unfenced': 'the same lock without the fence: oversells when a holder pauses (the bench never pauses one)',
  'naive-unsafe': 'read, check, write without a guard: concurrent updates are lost',
};

/** The files and the blocks each holds. */
export const FIGURE_FILES = {
  'README.md': ['how-fast'],
  'docs/performance.md': ['measured-on', 'numbers', 'strategies', 'costs', 'targets'],
};

/** Every block's text, by name, from a full run's results. */
export function renderFigureBlocks(r) {
  const scenario = (key) => {
    const found = r.scenarios.find((s) => s.key === key);
    if (!found) throw new Error(`the results have no "${key}" scenario: a full \`npm run bench\` run is needed`);
    return found;
  };
  const live = scenario('live');
  const soldOut = scenario('soldOut');
  const ceiling = scenario('ceiling');
  const { accepted } = r.livePerAcceptedPurchase;
  const scripts = live.redisCommands.top
    .filter((c) => /^(evalsha|eval|fcall)(_ro)?$/.test(c.command))
    .reduce((sum, c) => sum + c.calls, 0);
  const scriptsPerPurchase = round(scripts / accepted, 2);
  const commandsPerPurchase = round(live.redisCommands.totalCalls / accepted, 1);
  const guarded = r.strategies.filter((s) => !s.unsafe);
  const m = r.machine;
  return {
    'measured-on':
      `Measured by \`npm run bench\` at commit ${r.app.commit} on ${r.finishedAt.slice(0, 10)}: ${m.cpuCount} × ` +
      `${m.cpuModel}, Node ${m.node.replace(/^v/, '')}, everything on the one machine ` +
      '([bench/results/latest.md](../bench/results/latest.md)).',
    numbers: [
      '| what                                            | how much |',
      '| ----------------------------------------------- | -------- |',
      `| purchases accepted on a live sale (\`202\`)       | **${thousands(live.reqPerSec)} a second**, p99 ${round(live.latencyMs.p99, 0)} ms |`,
      `| answers on a sold-out sale (\`410\`)              | **${thousands(soldOut.reqPerSec)} a second**, p99 ${round(soldOut.latencyMs.p99, 0)} ms |`,
      `| orders written into MySQL by one worker         | **${thousands(r.drain.ordersPerSec)} orders a second** |`,
      `| Redis calls per purchase                        | **${scriptsPerPurchase}** scripts (the reservation; leases and the queue's own scripts share the rest), ${commandsPerPurchase} commands counting those the scripts run |`,
      `| a worker idling beside ${r.idle.sales} live, sold-out sales | ${r.idle.cpu.worker} % of one core |`,
      `| units oversold, any strategy but the UNSAFE ones | **${Math.max(...guarded.map((s) => s.audit.oversold))}**, audit ok |`,
      '',
      `The ceiling (a bare Fastify server running the same reservation script, nothing else) answered ` +
        `${thousands(ceiling.reqPerSec)} requests a second in the same run: the live purchases reached ` +
        `${Math.round(live.vsCeiling * 100)} % of that and the sold-out answers ${Math.round(soldOut.vsCeiling * 100)} %.`,
    ].join('\n'),
    strategies: [
      `Every strategy under the same burst (stock ${thousands(r.settings.strategyStock)}, ` +
        `${thousands(r.settings.strategyBuyers)} distinct buyers, ${r.settings.connections} connections):`,
      '',
      '| strategy | req/s | p99 | oversold | other answers | why |',
      '| -------- | ----: | --: | -------: | ------------: | --- |',
      ...r.strategies.map((s) => {
        const why = WHY[s.strategy];
        if (!why)
          throw new Error(`bench/lib/report/doc-figures.mjs has no line on why ${s.strategy} costs what it does`);
        const name = s.unsafe ? `\`${s.strategy}\` — **UNSAFE**` : `\`${s.strategy}\``;
        const oversold = s.unsafe ? `**${thousands(s.audit.oversold)}**` : thousands(s.audit.oversold);
        return `| ${name} | ${thousands(s.reqPerSec)} | ${round(s.latencyMs.p99, 0)} ms | ${oversold} | ${thousands(s.unexpectedStatuses)} | ${why} |`;
      }),
    ].join('\n'),
    costs: costsBlock(r, live, ceiling),
    targets: [
      '| target | measured | result |',
      '| ------ | -------- | ------ |',
      ...r.targets.map((t) => `| ${t.name} | ${t.measured} | ${targetVerdict(t).replace('MISS', '**MISS**')} |`),
    ].join('\n'),
    'how-fast':
      `**One Redis call per purchase.** On one ${m.cpuCount}-core machine that also runs the load generator, ` +
      `Redis and MariaDB, the app accepts **${thousands(live.reqPerSec)} purchases a second** on a live sale ` +
      `(p99 ${round(live.latencyMs.p99, 0)} ms), answers ${thousands(soldOut.reqPerSec)} buyers a second once a ` +
      `sale is sold out, and its worker writes the orders to MySQL at **${thousands(r.drain.ordersPerSec)} orders ` +
      `a second** (\`npm run bench\` at commit ${r.app.commit}).`,
  };
}

/** A live purchase's CPU by process, its Redis time and heap, beside the ceiling's per answer. */
function costsBlock(r, live, ceiling) {
  const { accepted } = r.livePerAcceptedPurchase;
  const perPurchase = (us) =>
    us === null || us === undefined ? '—' : `${thousands((us * live.requests) / accepted)} µs`;
  const perAnswer = (us) => (us === null || us === undefined ? '—' : `${thousands(us)} µs`);
  const heap = (h) => (h ? `${h.kbPerResponse} KB (GC ${percent(h.gcShareOfServerCpu)} of its CPU)` : '—');
  const writing = r.drain.cpuUsPerOrderWhileWriting;
  return [
    '| CPU and memory | per accepted live purchase, until its order is written | the ceiling, per answer |',
    '| -------------- | ------------------------------------------------------: | ----------------------: |',
    `| the server (the API; the ceiling's Fastify) | ${perPurchase(live.cpuUsPerResponse.api)} | ${perAnswer(ceiling.cpuUsPerResponse.ceiling)} |`,
    `| the worker | ${perPurchase(live.cpuUsPerResponse.worker)} | — |`,
    `| Redis | ${perPurchase(live.cpuUsPerResponse.redis)} | ${perAnswer(ceiling.cpuUsPerResponse.redis)} |`,
    `| MariaDB | ${perPurchase(live.cpuUsPerResponse.mysql)} | — |`,
    `| **the machine** (all of the above) | **${thousands(r.livePerAcceptedPurchase.machineCpuUs)} µs** | **${thousands(ceiling.cpuUsPerResponse.machine)} µs** |`,
    `| Redis command time | ${r.livePerAcceptedPurchase.redisUs} µs | ${ceiling.redisCommands.usecPerResponse} µs |`,
    `| the server's heap allocations | ${heap(live.serverHeap)} | ${heap(ceiling.serverHeap)} |`,
    '',
    `Writing the orders alone, at the drain (${thousands(r.drain.rows)} orders waiting for a fresh worker), from ` +
      `its first rows on: ${writing ? `worker ${writing.worker} µs + MariaDB ${writing.mysql} µs per order` : 'not measured'}.`,
  ].join('\n');
}

/** `text` with each of `blocks` put between its markers; throws when a marker is missing. */
export function withFigureBlocks(text, names, blocks) {
  let out = text;
  for (const name of names) {
    const pattern = blockPattern(name);
    if (!pattern.test(out)) throw new Error(`no <!-- bench:${name} --> … <!-- /bench:${name} --> block`);
    out = out.replace(pattern, (_all, open, _body, close) => `${open}\n${blocks[name]}\n${close}`);
  }
  return out;
}

/** The text of each of `names`' blocks in `text`, as written there. */
export function figureBlocksIn(text, names) {
  return Object.fromEntries(
    names.map((name) => [
      name,
      blockPattern(name)
        .exec(text)?.[2]
        ?.replace(/^\n|\n$/g, ''),
    ]),
  );
}

function blockPattern(name) {
  return new RegExp(`(<!-- bench:${name} -->)([\\s\\S]*?)(<!-- /bench:${name} -->)`);
}
