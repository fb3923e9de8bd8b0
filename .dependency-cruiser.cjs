/**
 * The import rules of the code (README, "Architecture"): shared/platform is the floor, every other
 * folder of shared/ is a feature wing, and functions/ and infra/ sit on top. `npm run lint:imports`
 * checks them, and CI runs it.
 */
const wing = '^shared/(?!platform/)([^/]+)/';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'No import circles: a module never reaches itself through what it loads (a type-only import loads nothing).',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'platform-stays-below-features',
      severity: 'error',
      comment:
        'shared/platform is for every feature; it never imports one (nor the route tables above them).',
      from: { path: '^shared/platform/' },
      to: { path: '^shared/', pathNot: '^shared/platform/' },
    },
    {
      name: 'shared-stays-below-functions',
      severity: 'error',
      comment:
        'shared/ never imports a function, the infrastructure, tests, benchmarks, clients or the console.',
      from: { path: '^shared/' },
      to: { path: '^(functions|infra|test|bench|clients|console|submission)/' },
    },
    {
      name: 'submission-is-an-api-client',
      severity: 'error',
      comment:
        'The SMTP submission server (submission/) is a client of the public API: it imports nothing of shared/, functions/ or infra/, so it runs as a service of its own.',
      from: { path: '^submission/' },
      to: { path: '^(shared|functions|infra|test|bench|clients|console)/' },
    },
    {
      name: 'features-meet-at-public-modules',
      severity: 'error',
      comment:
        "A feature uses another feature only through its public module (shared/<feature>/index.ts, or a part's shared/<feature>/<part>/index.ts), never its internals.",
      from: { path: wing },
      to: {
        path: '^shared/(?!platform/)[^/]+/',
        pathNot: ['^shared/$1/', '^shared/[^/]+/index\\.ts$', '^shared/[^/]+/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'functions-stay-apart',
      severity: 'error',
      comment: 'A function never imports another function: what two share lives in shared/.',
      from: { path: '^functions/([^/]+)/' },
      to: { path: '^functions/', pathNot: '^functions/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|console/dist|cdk\\.out)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    combinedDependencies: false,
    reporterOptions: { text: { highlightFocused: true } },
  },
};
