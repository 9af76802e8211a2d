/**
 * Dependency rules `npm test` checks (`npm run deps`), beside ESLint's module boundaries:
 * - no cycles between the folders of an app or a library: each folder is a feature (a Nest module)
 *   or a layer, and features depend on each other one way only;
 * - no cycles between files either;
 * - the dependency rule of docs/architecture.md "Parts": libs/db and libs/redis know nothing of each
 *   other nor of libs/stock, which spans both; libs never import apps.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
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
    exclude: { path: '(^|/)(dist|node_modules)/|\\.spec\\.ts$|\\.test\\.tsx?$|^apps/web/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.spec.json' },
  },
};
