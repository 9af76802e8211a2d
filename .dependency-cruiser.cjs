/**
 * Dependency rules `npm test` checks (`npm run deps`), beside ESLint's module boundaries:
 * - no cycles between the folders of an app or a library: each folder is a feature (a Nest module)
 *   or a layer, and features depend on each other one way only;
 * - no cycles between files either.
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
