// One linter for the project: typescript-eslint with type information, plus import fences that
// keep each outside dependency behind the one module allowed to touch it, and the layers apart
// (DESIGN.md, Architecture).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Each fenced import and the only files allowed to use it (`owner`: one path or a list). */
const fences = [
  { name: 'node:child_process', alias: 'child_process', owner: 'src/sources/exec.ts' },
  { name: 'node-cron', owner: 'src/schedule.ts' },
  { name: 'prom-client', owner: 'src/metrics/registry.ts' },
  { name: 'fastify', owner: 'src/server/server.ts' },
  { name: 'better-sqlite3', owner: 'src/history/database.ts' },
  { name: 'undici', owner: ['src/http-request.ts', 'src/undici-modules.d.ts', 'src/sources/health.ts', 'src/probes/client.ts', 'src/notify/post.ts'] },
  // A dev dependency: only the generator of the status page's script bundles (the daemon serves the result).
  { name: 'esbuild', owner: 'src/server/page-bundle.ts' },
];

const owners = (f) => (Array.isArray(f.owner) ? f.owner : [f.owner]);

/** Internal modules of a dependency (by path) and the only files allowed to reach into them. */
const deepFences = [
  { regex: '^undici/', owner: ['src/http-request.ts', 'src/undici-modules.d.ts'], message: "only src/http-request.ts may import undici's own modules by path (undici/lib/...): it pins what the daemon loads of undici" },
];

const restricted = (except) =>
  fences
    .filter((f) => !owners(f).includes(except))
    .flatMap((f) => [f.name, ...(f.alias ? [f.alias] : [])].map((name) => ({
      name,
      message: `only ${owners(f).join(' or ')} may import ${f.name}`,
    })));

/** A relative import of one of these modules of src/ (a folder or a single `name.ts`). */
const relativeTo = (names) => `^\\.{1,2}/(?:.*/)?(?:${names.join('|')})(?:/|\\.js$)`;

/** What a layer must not import: module specifiers (regular expressions) and why. */
const forbidden = {
  replayOrDaemon: { regex: relativeTo(['replay', 'daemon', 'judge']), message: 'a source only observes: it never imports replay, daemon or judging code (src/replay, src/daemon, src/judge)' },
  sources: { regex: relativeTo(['sources']), message: 'outputs only read typed state (src/state): they never import sources (src/sources)' },
  outputs: { regex: relativeTo(['server', 'status', 'metrics', 'page', 'dashboards', 'daemon']), message: 'the judging core imports no outputs and no daemon code' },
  nodeIo: {
    regex: '^(?:node:)?(?:fs|fs/promises|child_process|net|http|https|http2|tls|dgram|dns|dns/promises|readline|readline/promises|worker_threads|cluster|os|timers|timers/promises)$',
    message: 'the judging core is pure: no Node I/O or timers (time comes in with observations)',
  },
  node: { regex: '^node:', message: 'the status page runs in the browser: no Node modules' },
};

/** The layers of src/, each a set of folders, and what their files must not import. */
const layers = [
  { dirs: ['src/sources/'], forbid: [forbidden.replayOrDaemon] },
  { dirs: ['src/server/', 'src/status/', 'src/metrics/', 'src/dashboards/'], forbid: [forbidden.sources] },
  { dirs: ['src/page/'], forbid: [forbidden.sources, forbidden.node] },
  { dirs: ['src/judge/', 'src/classify/'], forbid: [forbidden.nodeIo, forbidden.outputs] },
];

const layerOf = (file) => layers.find((l) => l.dirs.some((d) => file.startsWith(d)));

/** The import rule of a file in `layer` (or none) that owns `owner`'s fenced dependency (or none). */
const importRule = (layer, owner) => ['error', {
  paths: restricted(owner),
  patterns: [
    ...(layer?.forbid ?? []).map((f) => ({ regex: f.regex, message: f.message })),
    ...deepFences.filter((f) => !f.owner.includes(owner)).map((f) => ({ regex: f.regex, message: f.message })),
  ],
}];

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
      'no-restricted-imports': importRule(undefined, undefined),
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_' }],
    },
  },
  ...layers.map((layer) => ({
    files: layer.dirs.map((d) => `${d}**`),
    rules: { 'no-restricted-imports': importRule(layer, undefined) },
  })),
  ...fences.flatMap((f) => owners(f).map((owner) => ({
    files: [owner],
    rules: { 'no-restricted-imports': importRule(layerOf(owner), owner) },
  }))),
  {
    // The status page's script (bundled by `npm run page`): every daemon text goes in as text.
    files: ['src/page/**/*.ts'],
    rules: {
      'no-restricted-properties': ['error',
        ...['innerHTML', 'outerHTML', 'insertAdjacentHTML'].map((property) => ({ property, message: 'daemon data is set as text (textContent), never parsed as HTML' })),
        { object: 'document', property: 'write', message: 'daemon data is set as text (textContent), never parsed as HTML' },
      ],
      'no-restricted-globals': ['error', { name: 'eval', message: 'the page runs under a CSP without unsafe-eval' }],
    },
  },
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
