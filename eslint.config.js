import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'data/',
      'coverage/',
      'dist/',
      '.tmp/',
      'test/e2e/artifacts/',
      'bench/node_modules/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        performance: 'readonly',
        fetch: 'readonly',
        AbortSignal: 'readonly',
      },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // A promise nobody awaits loses its failure: every one is awaited, returned, or marked `void` on purpose.
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test runs the tests these declare and reports their failures.
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      // Fastify plugins, hooks and handlers are async by contract, awaiting or not.
      '@typescript-eslint/require-await': 'off',
    },
  },
  // The domain never asks which database it runs on: what differs between SQLite and Postgres is the
  // store's (store/dialects/: `Store.sql`, asked for by meaning). A name or a text here that says
  // "dialect", "sqlite" or "postgres" is such a question (or an import of a store module of one), and
  // so is an import of either driver. Comments may still name the stores: they say why.
  {
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...['Identifier[name', 'Literal[value', 'TemplateElement[value.raw'].map((node) => ({
          selector: `${node}=/dialect|sqlite|postgres/i]`,
          message:
            'The domain does not ask which database it runs on: ask the store by meaning (Store.sql, src/store/dialects/store-sql.ts).',
        })),
      ],
      'no-restricted-imports': [
        'error',
        ...['better-sqlite3', 'pg'].map((name) => ({
          name,
          message: 'The database drivers are the store’s (src/store/).',
        })),
      ],
    },
  },
  // Plain JavaScript, and bot code (function bodies the sandbox runs, outside any TypeScript project).
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs', 'examples/**', 'test/fixtures/**'],
    ...tseslint.configs.disableTypeChecked,
  },
  // CommonJS (the runner of SDK bot processes, which may read nothing but itself and its bundle).
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
