// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'coverage/', 'build/', 'examples/generated/', 'web/generated/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error'] }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // The CLI and the banner of `npm start` print to stdout on purpose.
    files: ['src/cli/**', 'src/server-main.ts', 'bench/**', 'test/**', 'examples/**', 'web/build.ts', 'scripts/**'],
    rules: { 'no-console': 'off' },
  },
);
