/**
 * Dependency rules `npm test` checks (`npm run deps`), beside ESLint's module boundaries:
 * - no cycles between the folders of an app or a library: each folder is a feature (a Nest module)
 *   or a layer, and features depend on each other one way only;
 * - no cycles between files either;
 * - each strategy's folder (apps/api/src/purchase/strategies/) stands alone, and only the registry
 *   (strategies/stock-strategies.ts) reaches into one: the shared path asks a strategy through
 *   StockStrategy's hooks (docs/architecture.md "Strategies");
 * - the dependency rule of docs/architecture.md "Parts": libs/domain uses only libs/contract and ulid;
 *   libs/db and libs/redis know nothing of each other nor of libs/stock, which spans both through them
 *   (no TypeORM, mysql2 or ioredis of its own); libs never import apps.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const STRATEGIES = '^apps/api/src/purchase/strategies/';
/** The strategies that reuse another's folder, by design: the lock it shares, the strategy its fallback sells as. */
const STRATEGY_REUSES = { 'redis-lock-unfenced': 'redis-lock', 'redis-lua': 'db-optimistic' };
const STRATEGY_RULE_COMMENT =
  "A strategy's folder holds all it needs: besides its own files it uses the MySQL strategies' shared steps (mysql/), and another strategy's folder only where the design says (STRATEGY_REUSES).";

module.exports = {
  forbidden: [
    {
      name: 'strategies-stand-alone',
      comment: STRATEGY_RULE_COMMENT,
      severity: 'error',
      from: { path: `${STRATEGIES}([^/]+)/`, pathNot: `${STRATEGIES}(${Object.keys(STRATEGY_REUSES).join('|')})/` },
      to: { path: `${STRATEGIES}[^/]+/`, pathNot: `${STRATEGIES}($1|mysql)/` },
    },
    ...Object.entries(STRATEGY_REUSES).map(([strategy, reused]) => ({
      name: `strategies-stand-alone (${strategy})`,
      comment: STRATEGY_RULE_COMMENT,
      severity: 'error',
      from: { path: `${STRATEGIES}${strategy}/` },
      to: { path: `${STRATEGIES}[^/]+/`, pathNot: `${STRATEGIES}(${strategy}|${reused}|mysql)/` },
    })),
    {
      name: 'strategies-behind-the-registry',
      comment:
        "The shared purchase path, the demo and the rest of the app know a strategy only through StockStrategies and StockStrategy's hooks: a file outside the strategies' folders importing one of them names a strategy.",
      severity: 'error',
      from: { path: '^apps/api/src/', pathNot: `${STRATEGIES}` },
      to: { path: `${STRATEGIES}[^/]+/` },
    },
    {
      name: 'no-folder-cycles',
      comment: 'Folders depend on each other one way only: move the shared piece down, or the route to its owner.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^(apps|libs)/[^/]+/src/' },
      to: { circular: true },
    },
    {
      name: 'stores-know-nothing-of-each-other',
      comment:
        'libs/db is MySQL and libs/redis is Redis: what needs both (the lease protocol, the order lifecycle) lives in libs/stock.',
      severity: 'error',
      from: { path: '^libs/(db|redis)/' },
      to: { path: '^libs/(db|redis|stock)/', pathNot: '^libs/$1/' },
    },
    {
      name: 'domain-depends-on-contract-only',
      comment:
        'libs/domain is the rules alone: besides itself it may use libs/contract (the words it shares with HTTP) and ulid.',
      severity: 'error',
      from: { path: '^libs/domain/' },
      to: { pathNot: ['^libs/(domain|contract)/', '(^|/)node_modules/ulid/'] },
    },
    {
      name: 'stock-owns-its-transactions',
      comment:
        'libs/stock spans MySQL and Redis through libs/db and libs/redis: no TypeORM or driver type in its API, no query of its own.',
      severity: 'error',
      from: { path: '^libs/stock/' },
      to: { path: '(^|/)node_modules/(typeorm|@nestjs/typeorm|mysql2|ioredis)/' },
    },
    {
      name: 'libs-never-import-apps',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'no-file-cycles',
      severity: 'error',
      from: { path: '^(apps|libs)/[^/]+/src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // npm packages stay in the graph (not followed): the domain rule names the one it may use.
    exclude: { path: '(^|/)dist/|\\.spec\\.ts$|\\.test\\.tsx?$|^apps/web/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.spec.json' },
  },
};
