/**
 * Import rules for src/ (`npm run lint:deps`, part of `npm run lint`). ARCHITECTURE.md explains each
 * layer; this file is the enforceable copy of its "Layers" table.
 *
 * LAYERS lists the modules of src/ from the bottom up. A module may import modules of LOWER
 * layers only: never one of its own layer (siblings stay apart) nor one above it. A module is a
 * folder (`upstream` = src/upstream/**), a single file (`notifiers/notifier.ts`) or a family of
 * folders (`notifiers/receivers/*`: each receiver kind is a module of its own, and no kind imports
 * another). Every file of src/ belongs to exactly one module; a new folder must be added here
 * before it may import (a new receiver kind needs no change).
 */

const LAYERS = [
  ['log'],
  ['lib', 'version.ts'],
  ['upstream'],
  ['events', 'simulator'],
  ['store'],
  ['queues'],
  ['notifiers/notifier.ts'],
  ['operations', 'pollers', 'notifiers/receivers/*'],
  ['notifiers/receivers/kinds.ts', 'notifiers/routing'],
  ['notifiers/delivery', 'notifiers/muting'],
  ['notifiers/aggregation', 'notifiers/config.ts'],
  ['notifiers/dispatch'],
  ['config'],
  ['fleet', 'incidents'],
  ['metrics'],
  ['http'],
  ['daemon'],
  ['demo'],
  ['cli'],
];

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The path pattern of a module: a file exactly, a folder with everything below it, or each folder of a family. */
const pattern = (module) => {
  if (module.endsWith('/*')) return `^src/${escape(module.slice(0, -2))}/[^/]+/`;
  return module.endsWith('.ts') ? `^src/${escape(module)}$` : `^src/${escape(module)}/`;
};

const modules = LAYERS.flatMap((layer, rank) => layer.map((name) => ({ name, rank })));

const layerRules = modules.map(({ name, rank }) => {
  const lower = modules.filter((other) => other.rank < rank).map((other) => other.name);
  const notAllowed = modules.filter((other) => other.rank >= rank && other.name !== name);
  return {
    name: `layer:${name}`,
    severity: 'error',
    comment: `src/${name} may import only lower layers: ${lower.length ? lower.join(', ') : '(none)'} (see ARCHITECTURE.md, Layers)`,
    from: { path: pattern(name) },
    to: { path: notAllowed.length ? notAllowed.map((other) => pattern(other.name)) : '^$' },
  };
});

/** Within a family, each member is its own module: `notifiers/receivers/slack` never imports `…/webhook`. */
const familyRules = modules
  .filter(({ name }) => name.endsWith('/*'))
  .map(({ name }) => {
    const parent = `^src/${escape(name.slice(0, -2))}/`;
    return {
      name: `family:${name}`,
      severity: 'error',
      comment: `each folder of src/${name} is a module of its own and imports none of its siblings`,
      from: { path: `${parent}([^/]+)/` },
      to: { path: `${parent}[^/]+/`, pathNot: `${parent}$1/` },
    };
  });

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycles make modules impossible to understand or test one at a time.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'module-not-in-a-layer',
      severity: 'error',
      comment:
        'Every file of src/ belongs to a module of LAYERS in .dependency-cruiser.cjs; add a new folder there (and to ARCHITECTURE.md).',
      from: { path: '^src/', pathNot: [...modules.map((module) => pattern(module.name))] },
      to: { path: '^src/' },
    },
    {
      name: 'src-imports-no-tests',
      severity: 'error',
      comment: 'Production code never imports test, bench or script code.',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts)/' },
    },
    ...layerRules,
    ...familyRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a type cycle is a design cycle too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};

// The layer table itself, for the test that compares it with ARCHITECTURE.md (not a config key).
Object.defineProperty(module.exports, 'LAYERS', { value: LAYERS, enumerable: false });
