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
