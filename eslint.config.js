// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layers (docs/development.md, "Architecture"): what each directory of src/ may import besides
// itself; everything else in src/ and jobs/ is above it and refused. Pure logic (records/, the
// domain model, and sync/) imports no I/O package either. One way only: no two directories may
// import each other, directly or around a circle (test/unit/architecture/layers.test.ts).
const IO_PACKAGES = [
  'kysely',
  'pg',
  'ioredis',
  'bullmq',
  'undici',
  'node:fs',
  'node:net',
  'node:http',
  'node:https',
];
const BELOW_STREAMS = ['records', 'sync', 'api', 'warehouse', 'leases', 'alerts', 'redis', 'config'];
const BELOW_WORKER = [...BELOW_STREAMS, 'streams', 'runtime', 'simulator'];
const BELOW_VIEWS = [...BELOW_WORKER, 'worker'];
/** @type {Record<string, string[]>} */
export const MAY_IMPORT = {
  records: [],
  redis: [],
  sync: ['records'],
  simulator: ['records', 'sync'],
  // src/config/: the env schema reads the alert signature scheme names and event
  // types (sync/alert-signature-schemes.ts, sync/alert-events.ts) and parses the Redis settings
  // (redis/settings.ts); everything that reads a Config is above it.
  config: ['records', 'sync', 'redis'],
  api: ['records', 'sync', 'redis', 'config'],
  // The warehouse reads a fenced database's leases through its own LeaseFence (warehouse/leases.ts).
  warehouse: ['records', 'sync', 'api', 'redis', 'config'],
  leases: ['records', 'sync', 'api', 'warehouse', 'redis'],
  // Alerts: raised in the caller's transaction, stored, signed and delivered (src/alerts/).
  alerts: ['records', 'sync', 'config', 'warehouse', 'leases'],
  streams: BELOW_STREAMS,
  runtime: [...BELOW_STREAMS, 'streams', 'simulator'],
  worker: BELOW_WORKER,
  status: BELOW_VIEWS,
  http: [...BELOW_VIEWS, 'status'],
  doctor: [...BELOW_VIEWS, 'status'],
  demo: [...BELOW_VIEWS, 'status', 'http', 'doctor'],
};
const DIRECTORIES = [...Object.keys(MAY_IMPORT), 'cli', 'jobs'];
const ABOVE = Object.fromEntries(
  Object.entries(MAY_IMPORT).map(([dir, may]) => [
    dir,
    DIRECTORIES.filter((d) => d !== dir && !may.includes(d)),
  ]),
);
// A layer that is also a file beside its folder (none today: src/config.ts moved into src/config/).
/** @type {Record<string, string[]>} */
const ALSO_FILES = {};
/** @type {Record<string, string[]>} */
const ALSO_IMPORTS = { jobs: ['**/jobs/*'], config: ['**/config.js'] };
const layerRule = (dir, above, extra = []) => ({
  files: [`src/${dir}/**/*.ts`, ...(ALSO_FILES[dir] ?? [])],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          ...above.map((layer) => ({
            group: [`**/${layer}/**`, ...(ALSO_IMPORTS[layer] ?? [])],
            message: `src/${dir} is below ${layer}/ (docs/development.md, "Architecture")`,
          })),
          ...extra,
        ],
      },
    ],
  },
});
const pureRule = (dir) =>
  layerRule(dir, ABOVE[dir], [
    { group: IO_PACKAGES, message: `src/${dir} is pure logic: no I/O (docs/development.md, "Architecture")` },
  ]);

// Size: warnings, so the lint stays green while a file waits to be split; today's exceptions are
// listed below by name, so a new long file or function shows at once.
// Empty since issue 42 split src/warehouse/schema.ts: a file listed here is one to split at its
// named steps; remove it from the list when it is.
/** @type {string[]} */
const SIZE_EXCEPTIONS = [];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'test-artifacts/**', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Unawaited promises in job code lose work silently; these two rules are why we use typescript-eslint.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
    },
  },
  ...Object.entries(ABOVE).map(([dir, above]) =>
    dir === 'sync' || dir === 'records' ? pureRule(dir) : layerRule(dir, above),
  ),
  {
    // jobs/ sits above the library in src/ and below the CLI.
    files: ['jobs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: ['cli', 'http', 'status', 'doctor', 'demo'].map((layer) => ({
            group: [`**/${layer}/**`],
            message: `jobs/ is below src/${layer} (docs/development.md, "Architecture")`,
          })),
        },
      ],
    },
  },
  {
    files: ['src/**/*.ts', 'jobs/**/*.ts'],
    ignores: ['src/simulator/**', ...SIZE_EXCEPTIONS],
    rules: {
      'max-lines': ['warn', { max: 400, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['warn', { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // The simulator's files may be long (it plays a whole partner API), but a function of it stays
    // readable in one screenful of sections: a route table or a control surface is split by section.
    files: ['src/simulator/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // Migrations are frozen in time and typed against Kysely<any>, as kysely recommends.
    files: ['migrations/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
);
