import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import jsxA11y from 'eslint-plugin-jsx-a11y';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';
import { readFileSync } from 'node:fs';

/**
 * The strategies' names, read from the contract's one table of them (libs/contract/src/sale.ts): outside
 * that table and the strategies' own folders, code asks a strategy's hooks or its traits, never its name.
 */
const STRATEGY_NAMES = [
  ...readFileSync(new URL('libs/contract/src/sale.ts', import.meta.url), 'utf8')
    .split('const STRATEGY_TABLE = {')[1]
    .split('} as const')[0]
    .matchAll(/^ {2}'([a-z0-9-]+)': \{$/gm),
].map(([, name]) => name);
if (STRATEGY_NAMES.length === 0)
  throw new Error('eslint.config.mjs: no strategy table found in libs/contract/src/sale.ts');
const NO_STRATEGY_NAME = {
  selector: `Literal[value=/^(${STRATEGY_NAMES.join('|')})$/]`,
  message:
    "A strategy's name lives in the contract's table and its own folder: ask StockStrategies for its hooks, or the table for its traits.",
};
const NO_RAW_SQL = {
  selector: "CallExpression[callee.property.name='query']",
  message: 'Raw SQL lives in a repository of libs/db.',
};

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.data/**', '.nx/**', 'coverage/**', 'load-tests/**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx}'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // The dependency rule of docs/architecture.md "Parts": the pure domain imports no infrastructure, the
      // two stores' libraries know nothing of each other, what spans both is libs/stock's, libs never import apps.
      '@nx/enforce-module-boundaries': [
        'error',
        {
          allow: [],
          depConstraints: [
            // The HTTP contract is the bottom layer: everything may speak it, it speaks nothing else.
            { sourceTag: 'type:contract', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:contract'] },
            { sourceTag: 'type:infra', onlyDependOnLibsWithTags: ['type:contract', 'type:domain', 'type:infra'] },
            { sourceTag: 'infra:db', notDependOnLibsWithTags: ['infra:redis', 'type:stock', 'type:app'] },
            { sourceTag: 'infra:redis', notDependOnLibsWithTags: ['infra:db', 'type:stock', 'type:app'] },
            {
              sourceTag: 'type:stock',
              onlyDependOnLibsWithTags: ['type:contract', 'type:domain', 'type:infra'],
            },
            {
              sourceTag: 'type:app',
              onlyDependOnLibsWithTags: ['type:contract', 'type:domain', 'type:infra', 'type:stock'],
            },
          ],
        },
      ],
    },
  },
  {
    // The storefront: hooks used correctly, and the accessibility rules a shop page must pass.
    files: ['apps/web/**/*.{ts,tsx}'],
    ...jsxA11y.flatConfigs.recommended,
    plugins: { ...jsxA11y.flatConfigs.recommended.plugins, 'react-hooks': reactHooks },
    rules: { ...jsxA11y.flatConfigs.recommended.rules, ...reactHooks.configs.recommended.rules },
    languageOptions: { ...jsxA11y.flatConfigs.recommended.languageOptions },
  },
  {
    // One home per concern (docs/architecture.md, "The code"): the apps reach MySQL, Redis and BullMQ only through the
    // repositories of libs/db, libs/redis and libs/queue; raw SQL lives in libs/db.
    files: ['apps/api/src/**/*.ts', 'apps/worker/src/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            ...['typeorm', '@nestjs/typeorm', 'mysql2', 'ioredis', '@nestjs/bullmq'].map((name) => ({
              name,
              message: 'Use a repository of libs/db, libs/redis or libs/queue (raw clients live there).',
            })),
            {
              name: 'bullmq',
              allowTypeImports: true,
              message: 'Add jobs and start workers through OrdersQueue, LifecycleQueue and QueueWorkers (libs/queue).',
            },
            {
              name: '@flash-sale/redis',
              importNames: ['REDIS_CLIENT', 'createRedisClient', 'RedisClient'],
              message: 'The raw Redis client is for libs/redis: use its repositories (or RedisConnection).',
            },
            {
              name: '@flash-sale/queue',
              importNames: ['QUEUE_CONNECTION'],
              message: "BullMQ's connection is for libs/queue: use OrdersQueue, LifecycleQueue or QueueWorkers.",
            },
          ],
        },
      ],
      'no-restricted-syntax': ['error', NO_RAW_SQL, NO_STRATEGY_NAME],
    },
  },
  {
    // The strategies themselves may name themselves (and redis-lua's fallback the strategy it sells as).
    files: ['apps/api/src/purchase/strategies/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: { 'no-restricted-syntax': ['error', NO_RAW_SQL] },
  },
  {
    files: ['libs/*/src/**/*.ts'],
    ignores: ['**/*.spec.ts', 'libs/contract/**'],
    rules: { 'no-restricted-syntax': ['error', NO_STRATEGY_NAME] },
  },
  {
    // Tests may use the shared test support in test/support (real-service fixtures), which is not a project.
    files: ['**/*.spec.ts', '**/*.test.{ts,tsx}', 'test/**/*.ts', 'apps/web/src/test/**'],
    rules: { '@nx/enforce-module-boundaries': 'off' },
  },
  {
    files: ['libs/domain/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@nestjs/*', 'ioredis', 'typeorm', 'bullmq', 'mysql2', '@flash-sale/*', '!@flash-sale/contract'],
              message: 'libs/domain is pure TypeScript: no framework or infrastructure imports.',
            },
          ],
        },
      ],
    },
  },
  {
    // k6 and the browser load the contract's sources as they are, one file at a time, by relative path:
    // a value import (even of a sibling) would not resolve there. Types are erased, so they may come
    // from anywhere.
    files: ['libs/contract/src/**/*.ts'],
    ignores: ['libs/contract/src/index.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['*'],
              allowTypeImports: true,
              message: 'libs/contract imports nothing but types (k6 loads these files one by one).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.cjs', 'scripts/**/*.js', '*.config.js'],
    languageOptions: {
      globals: {
        process: 'readonly',
        module: 'writable',
        require: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        fetch: 'readonly',
      },
    },
  },
);
