import type { ActionDefinition, BotManifest, Workflow } from './format.ts';
import type { JsonDocument, LoadedJson } from './json-document.ts';
import { AI_TRANSITION_NONE, isTableCard, toolName, typedCard } from './cards.ts';
import { TOOL_NAME } from './format.ts';
import type { Problem } from './problems.ts';
import { pointer } from './problems.ts';
import { checkTableCard } from './tables.ts';
import type { PackageTable } from './tables.ts';
import { WEBHOOK_EVENT } from '../domain/webhooks/ingress.ts';
import { jsonSchemaProblem } from './validate.ts';

/** The id and type of a node as written, whether or not the node matched its schema. */
function nodeShape(node: unknown): { id?: string; type?: string } {
  if (typeof node !== 'object' || node === null) return {};
  const { id, type } = node as { id?: unknown; type?: unknown };
  return {
    ...(typeof id === 'string' && { id }),
    ...(typeof type === 'string' && { type }),
  };
}

export interface PackageParts {
  manifest: LoadedJson<BotManifest> | undefined;
  /** Every action by name; undefined for one whose JSON did not parse or validate (it still exists). */
  actions: Map<string, LoadedJson<ActionDefinition> | undefined>;
  /** Every workflow file by name; undefined for one that did not parse or validate (it still exists). */
  workflows: Map<string, LoadedJson<Workflow> | undefined>;
  /** Paths of the files under code/, relative to the package (`code/x.ts`). */
  codeFiles: Set<string>;
  /** Names of the knowledge bases of knowledge/. */
  knowledge: Set<string>;
  /** The tables of tables/, by file name. */
  tables: Map<string, PackageTable>;
}

/** Where a code card's `file` points, when it is acceptable: a .ts or .js file under code/. */
export function codeFilePath(file: string): string | undefined {
  const segments = file.replace(/^\.\//, '').split('/');
  if (segments[0] !== 'code' || segments.length < 2) return undefined;
  if (segments.some((s) => s === '' || s === '.' || s === '..' || s.includes('\\'))) return undefined;
  return /\.(ts|js)$/.test(file) ? segments.join('/') : undefined;
}

const JSON_TYPE: Record<string, (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number',
  boolean: (v) => typeof v === 'boolean',
  object: (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
  array: Array.isArray,
};

/**
 * What the schemas cannot say: references between files and between nodes, and consistency rules.
 * Runs only on files that matched their schemas, so the values have the shapes the types promise.
 */
export function checkReferences(parts: PackageParts): Problem[] {
  const problems: Problem[] = [];
  if (parts.manifest) problems.push(...checkManifest(parts.manifest));
  for (const action of parts.actions.values()) {
    if (!action) continue;
    for (const key of ['input', 'output'] as const) {
      const problem = jsonSchemaProblem(action.value[key]);
      if (problem) problems.push(action.doc.problem(pointer(key), `not a valid JSON Schema: ${problem}`));
    }
  }
  if (!parts.workflows.has('main')) {
    problems.push({
      file: 'workflows/main.json',
      line: 1,
      column: 1,
      field: '',
      message: 'missing: every package has a main workflow',
    });
  }
  for (const [name, workflow] of parts.workflows) {
    if (workflow) problems.push(...checkWorkflow(name, workflow, parts));
  }
  return problems;
}

function checkVariables(
  doc: JsonDocument,
  variables: Record<string, { type: string; default?: unknown }> | undefined,
  path: string[],
): Problem[] {
  return Object.entries(variables ?? {}).flatMap(([name, v]) =>
    v.default !== undefined && !JSON_TYPE[v.type]?.(v.default)
      ? [doc.problem(pointer(...path, name, 'default'), `must be of the variable's type, ${v.type}`)]
      : [],
  );
}

function checkManifest({ doc, value }: LoadedJson<BotManifest>): Problem[] {
  const problems = checkVariables(doc, value.configuration?.variables, ['configuration', 'variables']);
  for (const scope of ['conversation', 'user', 'bot', 'workflow'] as const) {
    problems.push(...checkVariables(doc, value.variables?.[scope], ['variables', scope]));
  }
  // Configuration variables and secrets share one namespace: both are read as env.<name>.
  (value.configuration?.secrets ?? []).forEach((name, i) => {
    if (value.configuration?.variables?.[name]) {
      problems.push(
        doc.problem(pointer('configuration', 'secrets', i), `"${name}" is also a configuration variable`),
      );
    }
  });
  for (const [name, schedule] of Object.entries(value.schedules ?? {})) {
    const problem = cronProblem(schedule.cron);
    if (problem) problems.push(doc.problem(pointer('schedules', name, 'cron'), problem));
  }
  for (const [name, event] of Object.entries(value.events ?? {})) {
    const problem = event.schema && jsonSchemaProblem(event.schema);
    if (problem)
      problems.push(doc.problem(pointer('events', name, 'schema'), `not a valid JSON Schema: ${problem}`));
  }
  return problems;
}

/** Five fields of digits, names, `*`, `,`, `-` and `/`: the scheduler has the final word on the values. */
function cronProblem(cron: string): string | undefined {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5)
    return `must have five fields (minute hour day-of-month month day-of-week), not ${fields.length}`;
  if (!fields.every((f) => /^[\w*,/-]+$/.test(f)))
    return 'fields may hold digits, names, *, ",", "-" and "/"';
  return undefined;
}

function checkWorkflow(
  name: string,
  { doc, value, broken }: LoadedJson<Workflow>,
  parts: PackageParts,
): Problem[] {
  const problems: Problem[] = [];
  const ids = new Map<string, number>();
  value.nodes.forEach((written, n) => {
    const node = nodeShape(written);
    if (node.id === undefined) return;
    if (ids.has(node.id)) {
      problems.push(
        doc.problem(
          pointer('nodes', n, 'id'),
          `duplicate node id "${node.id}" (also /nodes/${ids.get(node.id)})`,
        ),
      );
    } else {
      ids.set(node.id, n);
    }
  });
  const nodeRef = (target: string, field: string) => {
    if (!ids.has(target)) problems.push(doc.problem(field, `no node "${target}" in workflow ${name}`));
  };
  // An id names a knowledge base made through the API; a name must be one of the package's.
  const knowledgeRef = (knowledgeBase: string, field: string) => {
    if (!knowledgeBase.startsWith('kb_') && !parts.knowledge.has(knowledgeBase))
      problems.push(
        doc.problem(
          field,
          `no knowledge base "${knowledgeBase}" (knowledge/${knowledgeBase}.json), nor an id (kb_…)`,
        ),
      );
  };

  const first = name === 'main' ? 'start' : 'entry';
  const count = value.nodes.filter((node) => nodeShape(node).type === first).length;
  if (count !== 1) {
    problems.push(
      doc.problem('/nodes', `workflow ${name} must have exactly one ${first} node, not ${count}`),
    );
  }
  problems.push(...checkVariables(doc, value.variables, ['variables']));

  value.nodes.forEach((node, n) => {
    if (broken?.nodes.has(n)) return;
    const at = (...rest: (string | number)[]) => pointer('nodes', n, ...rest);
    if (node.type === 'start' && name !== 'main') {
      problems.push(
        doc.problem(at('type'), 'only the main workflow has a start node (others begin at their entry node)'),
      );
    }
    if (node.type === 'trigger' && !node.trigger)
      problems.push(doc.problem(at('trigger'), 'a trigger node needs a trigger'));
    if (node.type !== 'trigger' && node.trigger)
      problems.push(doc.problem(at('trigger'), 'only trigger nodes have a trigger'));
    if (node.trigger?.kind === 'custom_event') {
      const event = node.trigger.event;
      const declared = parts.manifest?.value.events?.[event] ?? parts.manifest?.value.schedules?.[event];
      // `alias:name` is an integration's event (a chat createEvent is `chat:custom`), `webhook` a request
      // to the bot's webhook: bot.json does not declare them.
      if (parts.manifest && !declared && !event.includes(':') && event !== WEBHOOK_EVENT) {
        problems.push(
          doc.problem(
            at('trigger', 'event'),
            `no event "${event}" in bot.json (events or schedules); integration events are named "alias:name", and "${WEBHOOK_EVENT}" is a request to the bot's webhook`,
          ),
        );
      }
    }
    if (node.trigger?.kind === 'schedule') {
      const problem = cronProblem(node.trigger.cron);
      if (problem) problems.push(doc.problem(at('trigger', 'cron'), problem));
    }
    if (typeof node.next === 'string') nodeRef(node.next, at('next'));
    else node.next?.forEach((t, j) => nodeRef(t.to, at('next', j, 'to')));

    (node.cards ?? []).map(typedCard).forEach((card, i) => {
      if (broken?.cards.has(`${n}/${i}`)) return;
      const cardAt = (field: string) => at('cards', i, field);
      if (isTableCard(card)) {
        checkTableCard(
          card,
          (...rest) => at('cards', i, ...rest),
          parts.tables,
          (field, message, key) => problems.push(doc.problem(field, message, { key: key ?? false })),
        );
        if (card.type === 'tableFind' && card.onNotFound !== undefined)
          nodeRef(card.onNotFound, cardAt('onNotFound'));
      }
      switch (card.type) {
        case 'expression':
          nodeRef(card.to, cardAt('to'));
          break;
        case 'capture':
          if (card.onFailure !== undefined) nodeRef(card.onFailure, cardAt('onFailure'));
          if (card.kind === 'choice' && !card.choices?.length) {
            problems.push(doc.problem(cardAt('choices'), 'a capture of kind choice needs choices'));
          }
          break;
        case 'code': {
          if ((card.code === undefined) === (card.file === undefined)) {
            problems.push(doc.problem(at('cards', i), 'a code card has exactly one of code and file'));
          } else if (card.file !== undefined) {
            const path = codeFilePath(card.file);
            if (!path)
              problems.push(
                doc.problem(cardAt('file'), 'must name a .ts or .js file under code/, e.g. code/greet.ts'),
              );
            else if (!parts.codeFiles.has(path))
              problems.push(doc.problem(cardAt('file'), `no file ${path}`));
          }
          break;
        }
        case 'action':
          // `alias:name` is an integration's action, which only the running bot knows.
          if (!card.action.includes(':') && !parts.actions.has(card.action)) {
            problems.push(
              doc.problem(cardAt('action'), `no action "${card.action}" (actions/${card.action}.json)`),
            );
          }
          break;
        case 'knowledge':
          knowledgeRef(card.knowledgeBase, cardAt('knowledgeBase'));
          if (card.onNotFound !== undefined) nodeRef(card.onNotFound, cardAt('onNotFound'));
          break;
        case 'knowledgeAnswer':
          if (Array.isArray(card.knowledgeBase))
            card.knowledgeBase.forEach((kb, j) => knowledgeRef(kb, at('cards', i, 'knowledgeBase', j)));
          else knowledgeRef(card.knowledgeBase, cardAt('knowledgeBase'));
          if (card.onNoAnswer !== undefined) nodeRef(card.onNoAnswer, cardAt('onNoAnswer'));
          break;
        case 'aiTransition': {
          const labels = new Set<string>();
          card.transitions.forEach((transition, j) => {
            nodeRef(transition.to, at('cards', i, 'transitions', j, 'to'));
            if (labels.has(transition.label) || transition.label === AI_TRANSITION_NONE)
              problems.push(
                doc.problem(
                  at('cards', i, 'transitions', j, 'label'),
                  transition.label === AI_TRANSITION_NONE
                    ? `"${AI_TRANSITION_NONE}" is the answer when no label applies`
                    : `the label "${transition.label}" is given twice`,
                ),
              );
            labels.add(transition.label);
          });
          if (card.onNone !== undefined) nodeRef(card.onNone, cardAt('onNone'));
          break;
        }
        case 'handoff':
          if (card.onResolved !== undefined) nodeRef(card.onResolved, cardAt('onResolved'));
          if (card.onTimeout !== undefined) nodeRef(card.onTimeout, cardAt('onTimeout'));
          break;
        case 'aiTask': {
          if (card.onFailure !== undefined) nodeRef(card.onFailure, cardAt('onFailure'));
          const problem = jsonSchemaProblem(card.schema);
          if (problem) problems.push(doc.problem(cardAt('schema'), `is not a JSON Schema: ${problem}`));
          break;
        }
        case 'autonomous': {
          if (i !== (node.cards ?? []).length - 1)
            problems.push(
              doc.problem(
                at('cards', i + 1),
                'no card runs after an autonomous card: it holds the node until one of its tools goes elsewhere',
              ),
            );
          if (card.onLimit !== undefined) nodeRef(card.onLimit, cardAt('onLimit'));
          const names = new Set<string>();
          card.tools.forEach((tool, j) => {
            const toolAt = (field: string) => at('cards', i, 'tools', j, field);
            switch (tool.type) {
              case 'action':
                if (!parts.actions.has(tool.action))
                  problems.push(
                    doc.problem(toolAt('action'), `no action "${tool.action}" (actions/${tool.action}.json)`),
                  );
                break;
              case 'node':
                nodeRef(tool.node, toolAt('node'));
                break;
              case 'workflow':
                if (!parts.workflows.has(tool.workflow))
                  problems.push(
                    doc.problem(
                      toolAt('workflow'),
                      `no workflow "${tool.workflow}" (workflows/${tool.workflow}.json)`,
                    ),
                  );
                break;
              case 'knowledge':
                knowledgeRef(tool.knowledgeBase, toolAt('knowledgeBase'));
                break;
            }
            const name = toolName(tool);
            if (!TOOL_NAME.test(name))
              problems.push(
                doc.problem(
                  at('cards', i, 'tools', j),
                  `"${name}" cannot be a tool's name (letters, digits, _ and -, at most 64): give the tool a name`,
                ),
              );
            else if (names.has(name))
              problems.push(doc.problem(at('cards', i, 'tools', j), `two tools are named "${name}"`));
            names.add(name);
          });
          break;
        }
        case 'goto': {
          if (!parts.workflows.has(card.workflow)) {
            problems.push(
              doc.problem(
                cardAt('workflow'),
                `no workflow "${card.workflow}" (workflows/${card.workflow}.json)`,
              ),
            );
            break;
          }
          const target = parts.workflows.get(card.workflow);
          if (
            card.node !== undefined &&
            target &&
            !target.value.nodes.some((x) => nodeShape(x).id === card.node)
          ) {
            problems.push(doc.problem(cardAt('node'), `no node "${card.node}" in workflow ${card.workflow}`));
          }
          break;
        }
      }
    });
  });
  return problems;
}
