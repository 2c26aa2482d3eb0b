import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { unitIds } from '../src/package/format.ts';
import type { CompiledPackage } from '../src/package/format.ts';
import { loadPackage, PackageError } from '../src/package/load.ts';
import type { Problem } from '../src/package/load.ts';
import { packageSchemaFiles } from '../src/package/schemas.ts';
import { runParley } from './helpers/process.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';

type Files = Record<string, string>;

const json = (value: unknown) => JSON.stringify(value, null, 2) + '\n';

/** A small package that uses every part of the format. */
function validPackage(): Files {
  return {
    'bot.json': json({
      $schema: '../schemas/bot.schema.json',
      formatVersion: 1,
      name: 'Greeter',
      description: 'Says hello',
      configuration: {
        variables: { greeting: { type: 'string', default: 'Hello' }, limit: { type: 'number' } },
        secrets: ['API_KEY'],
      },
      variables: { workflow: { age: { type: 'number', default: 0 } }, user: { name: { type: 'string' } } },
      events: { ping: { description: 'A ping', schema: { type: 'object' } } },
      schedules: { nightly: { cron: '0 3 * * *' } },
    }),
    'actions/double.json': json({
      description: 'Doubles n',
      input: { type: 'object', properties: { n: { type: 'number' } } },
      output: { type: 'object', properties: { n: { type: 'number' } } },
      cacheable: { ttlSeconds: 60 },
    }),
    'actions/double.ts': 'const n: number = (input as { n: number }).n;\nreturn { n: n * 2 };\n',
    'hooks/before_incoming_message/02-second.js': 'turn.second = true;\n',
    'hooks/before_incoming_message/01-first.ts': 'const seen: boolean = true;\nturn.first = seen;\n',
    'hooks/after_turn_end/log.ts': "console.info('turn ended');\n",
    'code/greet.ts':
      'interface G {\n  text: string;\n}\nconst g: G = { text: `${env.greeting}` };\nworkflow.greeting = g.text;\n',
    'workflows/main.json': json({
      nodes: [
        { id: 'start', type: 'start', next: 'ask' },
        {
          id: 'ask',
          type: 'standard',
          cards: [
            {
              type: 'say',
              message: { type: 'text', text: 'Hi {{ user.name }}, you are {{ workflow.age }}' },
            },
            {
              type: 'capture',
              variable: 'workflow.age',
              kind: 'number',
              prompt: 'How old are you?',
              validation: 'Number(workflow.age) > 0',
              retries: 2,
              retryMessage: '{{ workflow.age }} is no age',
              onFailure: 'done',
            },
            { type: 'code', file: 'code/greet.ts' },
            { type: 'code', code: 'workflow.x = 1;' },
            { type: 'set', variable: 'workflow.copy', value: '{{ workflow.age }}' },
            {
              type: 'action',
              action: 'double',
              input: { n: '{{ workflow.age }}' },
              output: 'workflow.doubled',
            },
            { type: 'expression', condition: 'workflow.age > 100', to: 'old' },
          ],
          next: [{ when: 'workflow.age >= 18', to: 'adult' }, { to: 'done' }],
        },
        {
          id: 'adult',
          type: 'standard',
          cards: [{ type: 'goto', workflow: 'survey', node: 'q' }],
          next: 'done',
        },
        {
          id: 'old',
          type: 'standard',
          cards: [{ type: 'say', message: { type: 'text', text: 'Wow' } }],
          next: 'done',
        },
        { id: 'pinged', type: 'trigger', trigger: { kind: 'custom_event', event: 'ping' }, next: 'done' },
        { id: 'done', type: 'end', cards: [{ type: 'end' }] },
      ],
    }),
    'workflows/survey.json': json({
      variables: { answer: { type: 'string', default: '' } },
      nodes: [
        { id: 'in', type: 'entry', next: 'q' },
        {
          id: 'q',
          type: 'standard',
          cards: [
            {
              type: 'capture',
              variable: 'workflow.answer',
              kind: 'choice',
              choices: [
                { label: 'Yes', value: 'yes' },
                { label: 'No', value: 'no' },
              ],
            },
          ],
          next: 'out',
        },
        { id: 'out', type: 'exit' },
      ],
    }),
    'README.md': 'Not part of the bot.\n',
  };
}

async function writePackage(dir: string, files: Files): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
}

let tmp: string;
let counter = 0;
before(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'parley-package-'));
});
after(() => rm(tmp, { recursive: true, force: true }));

async function load(files: Files): Promise<CompiledPackage> {
  const dir = path.join(tmp, `p${counter++}`);
  await writePackage(dir, files);
  return loadPackage(dir);
}

async function problemsOf(files: Files): Promise<Problem[]> {
  try {
    await load(files);
  } catch (err) {
    assert.ok(err instanceof PackageError, `expected a PackageError, got ${String(err)}`);
    return err.problems;
  }
  assert.fail('the package loaded without problems');
}

/** 1-based line and column of the first occurrence of `needle` in `text`. */
function positionOf(text: string, needle: string): { line: number; column: number } {
  const index = text.indexOf(needle);
  assert.ok(index >= 0, `${needle} not in the text`);
  const before = text.slice(0, index).split('\n');
  return { line: before.length, column: (before.at(-1) as string).length + 1 };
}

/** Changes one workflow of the valid package. */
function withMain(change: (main: { nodes: Record<string, unknown>[] }) => void): Files {
  const files = validPackage();
  const main = JSON.parse(files['workflows/main.json'] as string) as { nodes: Record<string, unknown>[] };
  change(main);
  return { ...files, 'workflows/main.json': json(main) };
}

const cardsOf = (node: Record<string, unknown> | undefined) => node?.cards as Record<string, unknown>[];

// Runs a unit body the way the sandbox does, in the test process: acceptable in a test only.
const AsyncFunction = (Object.getPrototypeOf(async function () {}) as { constructor: unknown })
  .constructor as new (...args: string[]) => (...values: unknown[]) => Promise<unknown>;
const SCOPE = ['event', 'workflow', 'conversation', 'user', 'bot', 'env', 'turn', 'input'];
async function run(body: string | undefined, scope: Record<string, unknown>): Promise<unknown> {
  assert.ok(body !== undefined, 'no such unit');
  return new AsyncFunction(...SCOPE, body)(...SCOPE.map((name) => scope[name] ?? {}));
}

describe('bot package: loading and compiling', () => {
  test('a valid package compiles to a CompiledPackage with every unit', async () => {
    const pkg = await load(validPackage());
    assert.equal(pkg.parley, 1);
    assert.equal(pkg.manifest.name, 'Greeter');
    assert.equal('$schema' in pkg.manifest, false, 'the editor hint is not part of the bot');
    assert.deepEqual(Object.keys(pkg.workflows).sort(), ['main', 'survey']);
    assert.deepEqual(Object.keys(pkg.actions), ['double']);
    assert.deepEqual(pkg.actions.double?.cacheable, { ttlSeconds: 60 });
    assert.deepEqual(pkg.hooks, {
      before_incoming_message: [
        unitIds.hook('before_incoming_message', '01-first.ts'),
        unitIds.hook('before_incoming_message', '02-second.js'),
      ],
      after_turn_end: [unitIds.hook('after_turn_end', 'log.ts')],
    });
    assert.deepEqual(
      Object.keys(pkg.units).sort(),
      [
        unitIds.action('double'),
        unitIds.card('main', 'ask', 2),
        unitIds.card('main', 'ask', 3),
        unitIds.condition('main', 'ask', 1),
        unitIds.condition('main', 'ask', 6),
        unitIds.hook('after_turn_end', 'log.ts'),
        unitIds.hook('before_incoming_message', '01-first.ts'),
        unitIds.hook('before_incoming_message', '02-second.js'),
        unitIds.template('main', 'ask', 0, 'message'),
        unitIds.template('main', 'ask', 1, 'retryMessage'),
        unitIds.template('main', 'ask', 4, 'value'),
        unitIds.template('main', 'ask', 5, 'input'),
        unitIds.when('main', 'ask', 0),
      ].sort(),
      'fields without templates (the prompt, "Wow") get no unit',
    );
    // TypeScript is gone, and the units run.
    assert.doesNotMatch(pkg.units[unitIds.action('double')] as string, /: number|as \{/);
    assert.deepEqual(await run(pkg.units[unitIds.action('double')], { input: { n: 21 } }), { n: 42 });
    const workflow: Record<string, unknown> = {};
    await run(pkg.units[unitIds.card('main', 'ask', 2)], { workflow, env: { greeting: 'Hey' } });
    assert.equal(workflow.greeting, 'Hey');
    // The package is what the engine gets: JSON all the way.
    assert.deepEqual(JSON.parse(JSON.stringify(pkg)), pkg);
  });

  test('templates render: exactly one {{ }} keeps its value, text concatenates, objects and arrays rebuild', async () => {
    const pkg = await load(
      withMain((main) => {
        cardsOf(main.nodes[1])[0] = {
          type: 'say',
          message: {
            type: 'card',
            title: '{{ user.name }}',
            count: '{{ workflow.age }}',
            whole: '{{ workflow.profile }}',
            text: 'Hi {{ user.name }}, {{ workflow.missing }}{{ workflow.nothing }}!',
            tags: ['{{ workflow.age + 1 }}', 'plain', 7, null, true, { nested: 'n={{ workflow.age }}' }],
            spaced: ' {{ workflow.age }} ',
          },
        };
        // As JSON.parse reads it: an own property named __proto__ (assigning it would set the prototype).
        Object.defineProperty(cardsOf(main.nodes[1])[0]?.message as object, '__proto__', {
          value: '{{ workflow.age }}',
          enumerable: true,
        });
      }),
    );
    const message = await run(pkg.units[unitIds.template('main', 'ask', 0, 'message')], {
      user: { name: 'Ada' },
      workflow: { age: 36, profile: { a: [1, 2] }, nothing: null },
    });
    assert.deepEqual(message, {
      type: 'card',
      title: 'Ada',
      count: 36,
      whole: { a: [1, 2] },
      text: 'Hi Ada, !',
      tags: [37, 'plain', 7, null, true, { nested: 'n=36' }],
      ['__proto__']: 36,
      spaced: ' 36 ',
    });
    assert.equal(Object.getPrototypeOf(message), Object.prototype, 'a "__proto__" key is a property');
    assert.equal(
      await run(pkg.units[unitIds.template('main', 'ask', 4, 'value')], { workflow: { age: 5 } }),
      5,
    );
    assert.deepEqual(
      await run(pkg.units[unitIds.template('main', 'ask', 5, 'input')], { workflow: { age: 5 } }),
      {
        n: 5,
      },
    );
  });

  test('conditions compile to booleans', async () => {
    const pkg = await load(validPackage());
    const when = pkg.units[unitIds.when('main', 'ask', 0)];
    assert.equal(await run(when, { workflow: { age: 18 } }), true);
    assert.equal(await run(when, { workflow: { age: 17 } }), false);
    const validation = pkg.units[unitIds.condition('main', 'ask', 1)];
    assert.equal(await run(validation, { workflow: { age: '0' } }), false);
    assert.equal(await run(validation, { workflow: { age: '3' } }), true);
  });

  test('a JSON syntax error names the file, line and column', async () => {
    const text = '{\n  "formatVersion": 1,\n  "name": "x",\n}\n';
    const problems = await problemsOf({ ...validPackage(), 'bot.json': text });
    assert.deepEqual(problems, [
      {
        file: 'bot.json',
        line: 4,
        column: 1,
        field: '',
        message: 'invalid JSON: trailing commas are not allowed in JSON',
      },
    ]);
    const missingComma = await problemsOf({
      ...validPackage(),
      'actions/double.json': '{ "input": {}\n  "output": {} }',
    });
    assert.equal(missingComma.length, 1);
    assert.deepEqual(
      { ...missingComma[0], message: undefined },
      {
        file: 'actions/double.json',
        line: 2,
        column: 3,
        field: '',
        message: undefined,
      },
    );
    assert.match(missingComma[0]?.message as string, /expected ","/);
  });

  test('a wrong type deep in a workflow is reported at its line with its JSON pointer', async () => {
    const files = withMain((main) => {
      (cardsOf(main.nodes[1])[1] as Record<string, unknown>).retries = 'three';
    });
    const problems = await problemsOf(files);
    const text = files['workflows/main.json'] as string;
    const { line, column } = positionOf(text, '"three"');
    assert.deepEqual(problems, [
      {
        file: 'workflows/main.json',
        line,
        column,
        field: '/nodes/1/cards/1/retries',
        message: 'must be an integer',
      },
    ]);
  });

  test('an unknown card type or property gets one precise message, not one per kind of card', async () => {
    const problems = await problemsOf(
      withMain((main) => {
        cardsOf(main.nodes[1]).push({ type: 'shout', message: 'x' });
        cardsOf(main.nodes[1]).push({ type: 'say', message: 'x', colour: 'red' });
        cardsOf(main.nodes[1]).push({ type: 'goto' });
      }),
    );
    assert.deepEqual(
      problems.map((p) => [p.field, p.message]),
      [
        [
          '/nodes/1/cards/7/type',
          'must be one of "say", "code", "expression", "capture", "set", "action", "goto", "end", "knowledge", "tableFind", "tableInsert", "tableUpdate", "tableUpsert", "tableDelete", "aiGenerate", "aiTask", "aiTransition", "knowledgeAnswer", "autonomous", "handoff"',
        ],
        ['/nodes/1/cards/8/colour', 'unknown property (allowed: type, id, message)'],
        ['/nodes/1/cards/9/workflow', 'is required'],
      ],
    );
  });

  test('a name that is not a Name is refused in records', async () => {
    const files = validPackage();
    const bot = JSON.parse(files['bot.json'] as string) as { events: Record<string, unknown> };
    bot.events['9lives'] = {};
    const problems = await problemsOf({ ...files, 'bot.json': json(bot) });
    assert.equal(problems.length, 1);
    assert.equal(problems[0]?.field, '/events/9lives');
    assert.match(problems[0]?.message, /"9lives" is not a valid name/);
  });

  test('a transition, expression card or capture naming a missing node is reported', async () => {
    const files = withMain((main) => {
      const ask = main.nodes[1] as Record<string, unknown>;
      (cardsOf(ask)[6] as Record<string, unknown>).to = 'nowhere';
      (cardsOf(ask)[1] as Record<string, unknown>).onFailure = 'void';
      ask.next = [{ when: 'true', to: 'limbo' }];
      (main.nodes[0] as Record<string, unknown>).next = 'gone';
    });
    const text = files['workflows/main.json'] as string;
    const problems = await problemsOf(files);
    assert.deepEqual(problems, [
      {
        file: 'workflows/main.json',
        ...positionOf(text, '"gone"'),
        field: '/nodes/0/next',
        message: 'no node "gone" in workflow main',
      },
      {
        file: 'workflows/main.json',
        ...positionOf(text, '"void"'),
        field: '/nodes/1/cards/1/onFailure',
        message: 'no node "void" in workflow main',
      },
      {
        file: 'workflows/main.json',
        ...positionOf(text, '"nowhere"'),
        field: '/nodes/1/cards/6/to',
        message: 'no node "nowhere" in workflow main',
      },
      {
        file: 'workflows/main.json',
        ...positionOf(text, '"limbo"'),
        field: '/nodes/1/next/0/to',
        message: 'no node "limbo" in workflow main',
      },
    ]);
  });

  test('an aiTask card whose schema is not a JSON Schema, or whose onFailure names no node, is reported', async () => {
    const files = withMain((main) => {
      const ask = main.nodes[1] as Record<string, unknown>;
      cardsOf(ask).push({
        type: 'aiTask',
        instructions: 'Find the order number',
        schema: { type: 'objekt' },
        variable: 'workflow.order',
        onFailure: 'nowhere',
      });
    });
    const text = files['workflows/main.json'] as string;
    const problems = await problemsOf(files);
    const { nodes } = JSON.parse(text) as { nodes: Record<string, unknown>[] };
    const card = cardsOf(nodes[1] ?? {}).length - 1;
    // The problem is at the schema's value, just after its key.
    const key = positionOf(text, '"schema": ');
    const schemaAt = { line: key.line, column: key.column + '"schema": '.length };
    assert.deepEqual(problems, [
      {
        file: 'workflows/main.json',
        ...schemaAt,
        field: `/nodes/1/cards/${card}/schema`,
        message: problems[0]?.message ?? '',
      },
      {
        file: 'workflows/main.json',
        ...positionOf(text, '"nowhere"'),
        field: `/nodes/1/cards/${card}/onFailure`,
        message: 'no node "nowhere" in workflow main',
      },
    ]);
    assert.match(
      problems[0]?.message ?? '',
      /^is not a JSON Schema: schema\/type must be equal to one of the allowed values/,
    );
  });

  test('an aiTransition card with a label twice, a label "none" or a missing node is reported', async () => {
    const files = withMain((main) => {
      const ask = main.nodes[1] as Record<string, unknown>;
      cardsOf(ask).push({
        type: 'aiTransition',
        transitions: [
          { label: 'refund', description: 'money back', to: 'ask' },
          { label: 'refund', description: 'again', to: 'ask' },
          { label: 'none', description: 'nothing', to: 'limbo' },
        ],
      });
    });
    const card =
      cardsOf(
        (JSON.parse(files['workflows/main.json'] as string) as { nodes: Record<string, unknown>[] })
          .nodes[1] ?? {},
      ).length - 1;
    const problems = (await problemsOf(files)).map((p) => [p.field, p.message]);
    assert.deepEqual(problems, [
      [`/nodes/1/cards/${card}/transitions/1/label`, 'the label "refund" is given twice'],
      [`/nodes/1/cards/${card}/transitions/2/label`, '"none" is the answer when no label applies'],
      [`/nodes/1/cards/${card}/transitions/2/to`, 'no node "limbo" in workflow main'],
    ]);
  });

  test('an action without its code file, or code without its JSON, is reported', async () => {
    const files = validPackage();
    delete files['actions/double.ts'];
    files['actions/orphan.js'] = 'return 1;';
    const problems = await problemsOf(files);
    assert.deepEqual(problems, [
      {
        file: 'actions/double.json',
        line: 1,
        column: 1,
        field: '',
        message: "missing the action's code: actions/double.ts or actions/double.js",
      },
      {
        file: 'actions/orphan.js',
        line: 1,
        column: 1,
        field: '',
        message: 'no actions/orphan.json describes this action',
      },
    ]);
  });

  test('a TypeScript syntax error in a hook is reported at its line in the file', async () => {
    const problems = await problemsOf({
      ...validPackage(),
      'hooks/before_incoming_message/01-first.ts': 'const a = 1;\n\nconst b: number = ;\n',
    });
    assert.deepEqual(problems, [
      {
        file: 'hooks/before_incoming_message/01-first.ts',
        line: 3,
        column: 19,
        field: '',
        message: 'Unexpected ";"',
      },
    ]);
  });

  test('code cannot import modules: import, import() and require are problems at their line', async () => {
    const problems = await problemsOf({
      ...validPackage(),
      'hooks/after_turn_end/log.ts': "const x = 1;\nimport fs from 'node:fs';\n",
      'actions/double.ts':
        "// require('no') in a comment is fine\nconst os = require('node:os');\nreturn 'import';\n",
      'code/greet.ts': 'const name = "x";\nconst m = await import(name);\n',
    });
    assert.deepEqual(
      problems.map((p) => [p.file, p.line, p.column]),
      [
        ['actions/double.ts', 2, 20],
        ['code/greet.ts', 2, 17],
        ['hooks/after_turn_end/log.ts', 2, 1],
      ],
    );
    for (const p of problems) assert.match(p.message, /cannot import modules/);
  });

  test('a body that closes its function early is refused', async () => {
    const problems = await problemsOf(
      withMain((main) => {
        cardsOf(main.nodes[1])[3] = { type: 'code', code: '}\nfunction escape() {' };
      }),
    );
    assert.equal(problems.length, 1);
    assert.equal(problems[0]?.field, '/nodes/1/cards/3/code');
    assert.match(problems[0]?.message, /not a function body/);
  });

  test('a condition or template that is not one expression is refused', async () => {
    const problems = await problemsOf(
      withMain((main) => {
        const ask = main.nodes[1] as Record<string, unknown>;
        ask.next = [{ when: 'a), (b', to: 'done' }];
        (cardsOf(ask)[0] as Record<string, unknown>).message = {
          type: 'text',
          text: 'Hi {{ user.name; 1 }}',
        };
        (cardsOf(ask)[6] as Record<string, unknown>).condition = 'x; y';
      }),
    );
    assert.deepEqual(
      problems.map((p) => p.field),
      ['/nodes/1/cards/0/message/text', '/nodes/1/cards/6/condition', '/nodes/1/next/0/when'],
    );
    for (const p of problems) assert.match(p.message, /is not one JavaScript expression/);
  });

  test('the other cross-references and rules are checked, all problems at once', async () => {
    const files = withMain((main) => {
      main.nodes[0] = { id: 'start', type: 'standard', next: 'ask' };
      const ask = main.nodes[1] as Record<string, unknown>;
      cardsOf(ask).push(
        { type: 'code', code: 'return 1', file: 'code/greet.ts' },
        { type: 'code', file: 'code/missing.ts' },
        { type: 'code', file: '../outside.ts' },
        { type: 'goto', workflow: 'nope' },
        { type: 'goto', workflow: 'survey', node: 'nope' },
        { type: 'capture', variable: 'user.name', kind: 'choice' },
        { type: 'action', action: 'triple' },
        { type: 'action', action: 'crm:createLead' },
      );
      main.nodes.push(
        { id: 'done', type: 'end' },
        { id: 't', type: 'trigger', trigger: { kind: 'custom_event', event: 'pong' } },
      );
    });
    files['hooks/on_everything/a.ts'] = '';
    files['hooks/after_turn_end/notes.txt'] = '';
    files['workflows/survey.json'] = json({ nodes: [{ id: 'in', type: 'start' }] });
    const problems = await problemsOf(files);
    assert.deepEqual(
      problems.map((p) => `${p.file} ${p.field} ${p.message}`),
      [
        'hooks/after_turn_end/notes.txt  a hook is a .ts or .js file',
        'hooks/on_everything  hooks/ holds one folder per hook type: before_incoming_message, after_incoming_message, before_outgoing_message, after_outgoing_message, before_incoming_event, after_incoming_event, after_turn_end, after_conversation_end',
        'workflows/main.json /nodes workflow main must have exactly one start node, not 0',
        'workflows/main.json /nodes/1/cards/7 a code card has exactly one of code and file',
        'workflows/main.json /nodes/1/cards/8/file no file code/missing.ts',
        'workflows/main.json /nodes/1/cards/9/file must name a .ts or .js file under code/, e.g. code/greet.ts',
        'workflows/main.json /nodes/1/cards/10/workflow no workflow "nope" (workflows/nope.json)',
        'workflows/main.json /nodes/1/cards/11/node no node "nope" in workflow survey',
        'workflows/main.json /nodes/1/cards/12/choices a capture of kind choice needs choices',
        'workflows/main.json /nodes/1/cards/13/action no action "triple" (actions/triple.json)',
        'workflows/main.json /nodes/2/cards/0/node no node "q" in workflow survey',
        'workflows/main.json /nodes/6/id duplicate node id "done" (also /nodes/5)',
        'workflows/main.json /nodes/7/trigger/event no event "pong" in bot.json (events or schedules); integration events are named "alias:name", and "webhook" is a request to the bot\'s webhook',
        'workflows/survey.json /nodes workflow survey must have exactly one entry node, not 0',
        'workflows/survey.json /nodes/0/type only the main workflow has a start node (others begin at their entry node)',
      ],
    );
  });

  test('a package without bot.json or a main workflow says so', async () => {
    const files = validPackage();
    delete files['bot.json'];
    delete files['workflows/main.json'];
    const problems = await problemsOf(files);
    assert.deepEqual(
      problems.map((p) => `${p.file}: ${p.message}`),
      ['bot.json: missing', 'workflows/main.json: missing: every package has a main workflow'],
    );
  });

  test('PackageError reads as file:line:col field: message, one line per problem', async () => {
    const files = withMain((main) => {
      (cardsOf(main.nodes[1])[6] as Record<string, unknown>).to = 'nowhere';
    });
    const { line, column } = positionOf(files['workflows/main.json'] as string, '"nowhere"');
    try {
      await load({ ...files, 'hooks/after_turn_end/log.ts': 'const = 1;' });
      assert.fail('expected a PackageError');
    } catch (err) {
      assert.ok(err instanceof PackageError);
      assert.ok(err instanceof Error);
      assert.equal(
        err.message,
        [
          'the bot package has 2 problems:',
          '  hooks/after_turn_end/log.ts:1:7 Expected identifier but found "="',
          `  workflows/main.json:${line}:${column} /nodes/1/cards/6/to: no node "nowhere" in workflow main`,
        ].join('\n'),
      );
    }
  });
});

describe('published JSON Schemas', () => {
  test('schemas/ holds exactly what the format defines (npm run schemas regenerates it)', async () => {
    const expected = packageSchemaFiles();
    const files = (await readdir('schemas')).filter((f) => f.endsWith('.json')).sort();
    assert.deepEqual(files, Object.keys(expected).sort());
    for (const file of files) {
      const published = JSON.parse(await readFile(path.join('schemas', file), 'utf8')) as unknown;
      assert.deepEqual(published, expected[file], `schemas/${file} is out of date: run npm run schemas`);
    }
  });

  test('each has $schema, $id, title and description', () => {
    for (const schema of Object.values(packageSchemaFiles())) {
      for (const key of ['$schema', '$id', 'title', 'description'])
        assert.equal(typeof schema[key], 'string');
    }
  });
});

describe('parley deploy and parley validate (SQLite)', () => {
  let t: TestServer;
  let dir: string;
  before(async () => {
    t = await startTestServer({ name: 'sqlite' });
    dir = path.join(tmp, 'deployed');
  });
  after(() => t.close());

  const env = () => ({ PARLEY_URL: t.url, PARLEY_TOKEN: t.token, PARLEY_WORKSPACE_ID: t.workspaceId });

  async function parley(args: string[]): Promise<{ code: number | null; output: string }> {
    const proc = runParley(args, env());
    const code = await proc.exited;
    return { code, output: proc.output() };
  }

  test('validate prints OK or every problem', async () => {
    await writePackage(dir, validPackage());
    const ok = await parley(['validate', dir]);
    assert.equal(ok.code, 0, ok.output);
    assert.match(ok.output, /^OK: Greeter: 2 workflows, 1 action, 3 hooks, 13 code units$/m);
    await writePackage(dir, { ...validPackage(), 'hooks/after_turn_end/log.ts': 'const = 1;' });
    const bad = await parley(['validate', dir]);
    assert.equal(bad.code, 1);
    assert.match(
      bad.output,
      new RegExp(`${path.join(dir, 'hooks/after_turn_end/log.ts')}:1:7 Expected identifier`),
    );
  });

  test('deploy creates a bot, redeploys to the same id, and a package with problems changes nothing', async () => {
    const client = t.client();
    await writePackage(dir, validPackage());
    const created = await parley(['deploy', dir]);
    assert.equal(created.code, 0, created.output);
    const botId = /bot (bot_\S+)/.exec(created.output)?.[1];
    assert.ok(botId, created.output);
    const { bot: first } = await client.getBot({ id: botId });
    assert.match(created.output, new RegExp(`Chat webhook URL: ${first.integrations.chat?.webhookUrl}`));
    assert.match(created.output, /secret API_KEY has no value yet/);
    assert.equal(first.name, 'Greeter');
    assert.equal(first.description, 'Says hello');
    assert.ok(first.deployedAt);
    assert.deepEqual(first.configuration.data, { greeting: 'Hello' });
    assert.deepEqual(first.actions.double?.input.schema, {
      type: 'object',
      properties: { n: { type: 'number' } },
    });
    assert.equal(first.actions.double?.cacheable, true);
    assert.deepEqual(first.events.ping, { description: 'A ping', schema: { type: 'object' } });
    const code = JSON.parse((await botCode(botId)) as string) as CompiledPackage;
    assert.equal(code.parley, 1);
    assert.deepEqual(code, await loadPackage(dir));

    // Redeploy: new code, one action fewer.
    await sleep(5);
    const changed = withMain((main) => cardsOf(main.nodes[1]).splice(5, 1));
    delete changed['actions/double.json'];
    delete changed['actions/double.ts'];
    changed['hooks/after_turn_end/log.ts'] = "console.info('v2');\n";
    await writePackage(dir, changed);
    const redeployed = await parley(['deploy', dir, '--bot-id', botId]);
    assert.equal(redeployed.code, 0, redeployed.output);
    const { bot: second } = await client.getBot({ id: botId });
    assert.equal(second.id, botId);
    assert.notEqual(second.deployedAt, first.deployedAt);
    assert.deepEqual(second.actions, {}, 'an action the package no longer has is removed');
    const secondCode = (await botCode(botId)) as string;
    assert.notEqual(secondCode, JSON.stringify(code));
    assert.match(secondCode, /v2/);
    assert.equal((await client.listBots({})).bots.filter((b) => b.name === 'Greeter').length, 1);

    // A package with a problem: nothing is sent.
    await writePackage(dir, { ...changed, 'hooks/after_turn_end/log.ts': "console.info('v3'" });
    const failed = await parley(['deploy', dir, '--bot-id', botId]);
    assert.equal(failed.code, 1);
    assert.match(failed.output, /1 problem; nothing was deployed/);
    assert.match(failed.output, /log\.ts:1:\d+ /);
    const { bot: third } = await client.getBot({ id: botId });
    assert.equal(third.deployedAt, second.deployedAt);
    assert.equal(third.updatedAt, second.updatedAt);
    assert.equal(await botCode(botId), secondCode);
  });

  test('API errors print as parley: <type>: <message>', async () => {
    await writePackage(dir, validPackage());
    const missing = await parley(['deploy', dir, '--bot-id', 'bot_nope']);
    assert.equal(missing.code, 1);
    assert.match(missing.output, /^parley: ResourceNotFound: .+/m);
    const proc = runParley(['deploy', dir], { ...env(), PARLEY_TOKEN: 'bp_pat_wrong' });
    assert.equal(await proc.exited, 1);
    assert.match(proc.output(), /^parley: Unauthorized: .+/m);
    const noToken = runParley(['deploy', dir], { PARLEY_URL: t.url });
    assert.equal(await noToken.exited, 1);
    assert.match(noToken.output(), /PARLEY_TOKEN/);
  });

  test('a folder remembers the bot it deployed to; --new creates another; a deleted bot is named', async () => {
    const client = t.client();
    const folder = path.join(tmp, 'linked');
    await writePackage(folder, validPackage());
    const first = await parley(['deploy', folder]);
    assert.equal(first.code, 0, first.output);
    const botId = /^Created and deployed Greeter: bot (bot_\S+)$/m.exec(first.output)?.[1];
    assert.ok(botId, first.output);
    assert.match(first.output, /now deploys to this bot \(\.parley\/links\.json\)/);
    // The link is the folder's own, ignored by git.
    assert.equal(
      await readFile(path.join(folder, '.parley/.gitignore'), 'utf8').then((s) => s.includes('*')),
      true,
    );

    const again = await parley(['deploy', folder]);
    assert.equal(again.code, 0, again.output);
    assert.match(again.output, new RegExp(`^Deployed Greeter: bot ${botId}$`, 'm'));
    assert.match(again.output, /--new creates another bot instead/);

    const fresh = await parley(['deploy', folder, '--new']);
    assert.equal(fresh.code, 0, fresh.output);
    const newId = /^Created and deployed Greeter: bot (bot_\S+)$/m.exec(fresh.output)?.[1];
    assert.ok(newId && newId !== botId, fresh.output);
    const followed = await parley(['deploy', folder]);
    assert.match(followed.output, new RegExp(`^Deployed Greeter: bot ${newId}$`, 'm'));

    // A copy of the folder (its links file along) gets a bot of its own, and says why.
    const copy = path.join(tmp, 'linked-copy');
    await cp(folder, copy, { recursive: true });
    const copied = await parley(['deploy', copy]);
    assert.equal(copied.code, 0, copied.output);
    assert.match(copied.output, /^Created and deployed Greeter: bot /m);
    assert.doesNotMatch(copied.output, /^Deployed Greeter/m, 'not over the original folder’s bot');
    assert.match(copied.output, /this folder is a copy, so it gets a bot of its own/);
    const copyAgain = await parley(['deploy', copy]);
    assert.match(copyAgain.output, /^Deployed Greeter: bot /m);
    assert.doesNotMatch(copyAgain.output, new RegExp(`^Deployed Greeter: bot ${newId}$`, 'm'));

    // Another workspace of the same server is another link: the folder creates its bot there.
    const other = await client.createWorkspace({ name: 'links elsewhere' });
    const elsewhere = runParley(['deploy', folder, '--workspace-id', other.id], env());
    assert.equal(await elsewhere.exited, 0, elsewhere.output());
    assert.match(elsewhere.output(), /^Created and deployed Greeter: bot /m);
    const back = await parley(['deploy', folder]);
    assert.match(back.output, new RegExp(`^Deployed Greeter: bot ${newId}$`, 'm'));

    await client.deleteBot({ id: newId });
    const gone = await parley(['deploy', folder]);
    assert.equal(gone.code, 1);
    assert.match(
      gone.output,
      new RegExp(`^parley: .* was deployed to bot ${newId} .*deploy with --new`, 'm'),
    );
    const both = await parley(['deploy', folder, '--new', '--bot-id', botId]);
    assert.equal(both.code, 1);
    assert.match(both.output, /--bot-id and --new: choose one/);
  });

  /** The stored code, which the Admin API does not return: read through the server's domain. */
  async function botCode(botId: string): Promise<string | null | undefined> {
    return (await t.server.domain.bots.forRuntime(botId))?.code;
  }
});
