/**
 * Three projects: `unit` (pure, fast), `integration` (`*.int.spec.ts`: real Redis and MariaDB,
 * each file with its own database and key prefix) and `e2e` (`test/e2e/*.e2e.spec.ts`: the built
 * storefront in headless Chromium against the real API, worker, Redis and MariaDB). ts-jest transpiles file by file (type checking
 * is `npm run typecheck`'s job) and keeps decorator metadata, so Nest DI works without a build;
 * libs resolve to their sources.
 */
const tsJest = ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }];

const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': tsJest },
  moduleNameMapper: { '^@flash-sale/(contract|domain|config|redis|db|stock|queue)$': '<rootDir>/libs/$1/src' },
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/', '<rootDir>/.data/'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/apps/web/'],
};

module.exports = {
  projects: [
    {
      ...shared,
      displayName: 'unit',
      // load-tests/lib: the k6 reports' verdict and formatting logic, which imports no k6 module.
      testMatch: ['<rootDir>/{apps,libs}/*/src/**/*.spec.ts', '<rootDir>/load-tests/lib/**/*.spec.ts'],
      testPathIgnorePatterns: ['\\.int\\.spec\\.ts$'],
    },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/{apps,libs}/*/src/**/*.int.spec.ts', '<rootDir>/test/**/*.int.spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/integration-setup.ts'],
    },
    {
      ...shared,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e.spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/integration-setup.ts'],
    },
  ],
};
