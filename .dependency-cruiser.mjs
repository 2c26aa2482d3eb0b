// The layers of docs/architecture.md ("Folders, and the direction of dependencies"), checked by
// `npm run lint` (and so by `npm test`): `npx depcruise src console/src webchat/src bench`.
// A rule is kept only while it holds; a change that breaks one moves the shared piece where it
// belongs (the lower module, or a small module of its own) instead of adding an exception here.

import { builtinModules } from 'node:module';

/** Node's own modules, as dependency-cruiser names them (`node:crypto` is `crypto`). */
const NODE_CORE = `^(node:)?(${builtinModules.join('|')})$`;

/**
 * The server's pure modules besides the contract that the console bundles: the closed value sets, the
 * page sizes, the roles' rules and the fallback message's default, each the one source of what it states.
 */
const SHARED_PURE =
  '^src/(value-sets|domain/shared/page-size|domain/workspace/role-rules|domain/chat/fallback-message)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment:
        'Modules that import each other cannot be understood, tested or moved one at a time, and ' +
        'an ES module cycle can run a module before what it imports is defined. Put what both need ' +
        'in the lower module, or in a small module of its own.',
      severity: 'error',
      from: { path: '^(src|console/src|webchat/src|bench)/' },
      to: { circular: true },
    },
    {
      name: 'domain-not-to-outer-layers',
      comment:
        'The domain holds the rules; the API, the contract, the handlers, the engine, the CLI, the bot ' +
        'package and the server are built on it, and the engine drives it through the ports it ' +
        'defines. A domain that imports them cannot be used or tested without them.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/(api|contract|handlers|engine|cli|package)/|^src/server\\.ts$' },
    },
    {
      name: 'store-not-to-upper-layers',
      comment:
        'The store opens databases and migrates them, and knows nothing of the rules or the APIs ' +
        'over it: the domain, the API and the engine read and write through it, never the reverse.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/(domain|api|contract|handlers|engine|cli|package)/|^src/server\\.ts$' },
    },
    {
      name: 'contract-is-pure',
      comment:
        'The contract declares the APIs (schemas, paths, methods, access, answers) and nothing else: ' +
        'the console and the CLI import it, and typed clients are made from it, so a spec must never ' +
        'drag the server in. Nothing it reaches, through the pure modules of the domain its schemas ' +
        'come from, may be a Node module, a package but typebox, or the API, the handlers, the engine, ' +
        'the store, the CLI or the bot package. The same holds for the few pure modules the console ' +
        'bundles beside it (SHARED_PURE).',
      severity: 'error',
      from: { path: ['^src/contract/', SHARED_PURE] },
      to: {
        reachable: true,
        path: [NODE_CORE, '(^|/)node_modules/', '^src/(api|handlers|engine|store|cli|package)/'],
        pathNot: '(^|/)node_modules/typebox/',
      },
    },
    {
      name: 'handlers-not-to-outer-layers',
      comment:
        'The handlers bind the contract to the domain; the API routes them and the engine gives them ' +
        'to bot code. Handlers that import either (or the CLI, the bot package, the server) could not ' +
        'be run by the other.',
      severity: 'error',
      from: { path: '^src/handlers/' },
      to: { path: '^src/(api|engine|cli|package)/|^src/server\\.ts$' },
    },
    {
      name: 'nothing-to-api',
      comment:
        'The API is HTTP only, the outermost layer: only the server that wires it may import it, so ' +
        'no rule or behaviour lives behind a route where nothing else can reach it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(api/|server\\.ts$)' },
      to: { path: '^src/api/' },
    },
    {
      name: 'browser-code-only-to-contract',
      comment:
        'The console and the webchat run in browsers, bundled on their own: of the server they may ' +
        'import only the contract (the declared wire shapes) and the pure modules of SHARED_PURE, never ' +
        'the rest of the domain, the store or Node code.',
      severity: 'error',
      from: { path: '^(console|webchat)/src/' },
      to: { path: '^src/', pathNot: ['^src/contract/', SHARED_PURE] },
    },
  ],
  options: {
    // Type-only imports are dependencies too: a cycle of types is still a cycle of modules.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
  },
};
