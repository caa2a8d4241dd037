// One linter for the project: typescript-eslint with type information, plus import fences that
// keep each outside dependency behind the one module allowed to touch it (DESIGN.md, Architecture).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Each fenced import and the only files allowed to use it (`owner`: one path or a list). */
const fences = [
  { name: 'node:child_process', alias: 'child_process', owner: 'src/sources/exec.ts' },
  { name: 'node-cron', owner: 'src/schedule.ts' },
  { name: 'prom-client', owner: 'src/metrics/registry.ts' },
  { name: 'fastify', owner: 'src/server/server.ts' },
  { name: 'better-sqlite3', owner: 'src/history/database.ts' },
  { name: 'systeminformation', owner: 'src/sources/host.ts' },
  { name: 'undici', owner: ['src/sources/health.ts', 'src/probes/client.ts', 'src/notify/post.ts'] },
];

const owners = (f) => (Array.isArray(f.owner) ? f.owner : [f.owner]);

const restricted = (except) =>
  fences
    .filter((f) => !owners(f).includes(except))
    .flatMap((f) => [f.name, ...(f.alias ? [f.alias] : [])].map((name) => ({
      name,
      message: `only ${owners(f).join(' or ')} may import ${f.name}`,
    })));

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'dashboards/', 'test/fixtures/'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      'no-restricted-imports': ['error', { paths: restricted(undefined) }],
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_' }],
    },
  },
  ...fences.flatMap((f) => owners(f).map((owner) => ({
    files: [owner],
    rules: { 'no-restricted-imports': ['error', { paths: restricted(owner) }] },
  }))),
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Tests and benchmarks drive real binaries (journalctl, promtool, mtail) directly.
      // (The fence still holds for src/: see test/lint/fences.test.ts.)
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  {
    files: ['scripts/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: { 'no-restricted-imports': 'off' },
  },
);
