import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import jsxA11y from 'eslint-plugin-jsx-a11y';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.data/**', '.nx/**', 'coverage/**', 'load-tests/**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx}'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // The dependency rule of DESIGN.md "Parts": the pure domain imports no infrastructure, libs
      // never import apps.
      '@nx/enforce-module-boundaries': [
        'error',
        {
          allow: [],
          depConstraints: [
            { sourceTag: 'type:domain', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'type:infra', onlyDependOnLibsWithTags: ['type:domain', 'type:infra'] },
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:domain', 'type:infra'] },
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
              group: ['@nestjs/*', 'ioredis', 'typeorm', 'bullmq', 'mysql2', '@flash-sale/*'],
              message: 'libs/domain is pure TypeScript: no framework or infrastructure imports.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.mjs', 'scripts/**/*.js', '*.config.js'],
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
