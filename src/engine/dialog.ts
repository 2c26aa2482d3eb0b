import { AI_TRANSITION_NONE } from '../package/cards.ts';
import type { TableCard } from '../package/cards.ts';
import type { Card, WorkflowNode } from '../package/format.ts';
import { unitIds } from '../package/format.ts';
import { findPackageTable } from '../package/tables.ts';
import { ApiError } from '../domain/shared/errors.ts';
import type { DialogState, Frame } from './dialog-state.ts';
import { DialogError, fileLink, generateText, modelCallLine } from './dialog-host.ts';
import type { DialogHost } from './dialog-host.ts';
import { runAutonomous } from './autonomous.ts';
import type { Json, JsonObject } from './sandbox/types.ts';
import { previewOf } from './event-object.ts';
import type { KnowledgeResult } from './event-object.ts';
import { answerPrompt, readAnswer, replyText } from './knowledge-answer.ts';
import type { Source } from './knowledge-answer.ts';
import { isJsonObject } from '../domain/shared/json.ts';
import { createAjv } from '../domain/shared/json-schema.ts';
import type { ValidateFunction } from 'ajv';
import type { Message } from '../domain/runtime/schemas.ts';

/** Transitions a turn may take before it is stopped as a loop in the workflow graph. */
const MAX_STEPS = 1000;

/** The `meta.promptSource` of each AI card's model calls: the hosted platform's names. */
const AI_PROMPT_SOURCES = {
  aiGenerate: 'cards/ai-generate',
  aiTask: 'cards/ai-task',
  // The hosted platform's AI Transition is "a specific type of AI Task".
  aiTransition: 'cards/ai-task',
  // The hosted platform names no source for knowledge answers: an answer is text a model generates.
  knowledgeAnswer: 'cards/ai-generate',
} as const;
/** Answers an aiTask or aiTransition card asks for: the first, and one more shown the error. */
const AI_TASK_ATTEMPTS = 2;
const aiTaskAjv = createAjv({ strict: false });

type AiCard = Extract<Card, { type: 'aiGenerate' | 'aiTask' | 'aiTransition' | 'knowledgeAnswer' }>;

/** A model's JSON answer, or undefined when it is not JSON. */
function parsedJson(text: string): Json | undefined {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

type CardResult = { kind: 'next' } | { kind: 'goto'; node: string } | { kind: 'wait' } | { kind: 'stop' };

/**
 * Runs the bot's workflows for one turn: from where the dialog stands (or from a start point) until it
 * waits for the user, ends, or has nowhere to go. The dialog state is checkpointed after every card.
 */
export class DialogRunner {
  /** The aiTask cards' schemas, compiled once per run (the package's card objects are the keys). */
  private readonly validators = new WeakMap<object, ValidateFunction>();

  constructor(private readonly host: DialogHost) {}

  private get dialog(): DialogState {
    return this.host.dialog;
  }

  /** Starts a workflow at a node (a trigger, `main`'s start, or a sub-workflow's entry). */
  async start(workflow: string, node: string): Promise<void> {
    for (const frame of [...this.dialog.frames].reverse()) await this.host.finishWorkflow(frame, 'cancelled');
    this.dialog.frames = [{ workflow, node, card: 0, recordId: await this.host.startWorkflow(workflow) }];
    this.dialog.waiting = undefined;
    this.dialog.autonomous = undefined;
    this.dialog.handoff = undefined;
    this.dialog.started = true;
    await this.host.save();
  }

  /**
   * After a deploy or a rollback (`deployBotVersion`), a dialog goes on in the version the bot runs now,
   * where it stood, when that version has the workflow and node of each of its frames; otherwise its
   * place is lost: its workflows are cancelled and it starts over as if it had ended, from this turn's
   * start point, and the bot's logs say so.
   */
  async startOverWhenLost(): Promise<void> {
    const lost = this.dialog.frames.find(
      (frame) => !this.host.pkg.workflows[frame.workflow]?.nodes.some((n) => n.id === frame.node),
    );
    if (!lost) return;
    for (const frame of [...this.dialog.frames].reverse()) await this.host.finishWorkflow(frame, 'cancelled');
    this.dialog.frames = [];
    this.dialog.waiting = undefined;
    this.dialog.autonomous = undefined;
    this.dialog.handoff = undefined;
    this.host.log(
      'warn',
      `The deployed version has no node "${lost.node}" in workflow "${lost.workflow}", where the dialog stood: it starts over`,
    );
    await this.host.save();
  }

  /** Answers the capture card that waits, with the user's message; true when the dialog should go on. */
  async answer(message: Pick<Message, 'type' | 'payload'>): Promise<boolean> {
    const frame = this.top();
    const card = this.cardAt(frame);
    if (!card || card.type !== 'capture' || !this.dialog.waiting) return true;
    const payload = { type: message.type, ...message.payload };
    const value = extract(card, payload);
    const valid =
      value !== undefined &&
      (card.validation === undefined ||
        (await this.host.run(unitIds.condition(frame.workflow, frame.node, frame.card), { input: value })) ===
          true);
    if (valid) {
      await this.host.setVariable(card.variable, value);
      this.dialog.waiting = undefined;
      frame.card++;
      await this.host.save();
      return true;
    }
    const attempts = this.dialog.waiting.attempts + 1;
    if (attempts > (card.retries ?? 2)) {
      this.dialog.waiting = undefined;
      if (card.onFailure) this.moveTo(frame, card.onFailure);
      else frame.card++;
      await this.host.save();
      return true;
    }
    this.dialog.waiting = { attempts };
    await this.host.reply(await this.prompt(frame, card, 'retryMessage'));
    await this.host.save();
    return false;
  }

  /** Runs cards and transitions until the dialog waits, ends or has nowhere to go. */
  async run(): Promise<void> {
    for (let steps = 0; this.dialog.frames.length > 0; steps++) {
      if (steps > MAX_STEPS)
        throw new DialogError(`The dialog took more than ${MAX_STEPS} steps in one turn: a loop?`);
      const frame = this.top();
      const node = this.node(frame);
      const cards = node.cards ?? [];
      const card = cards[frame.card];
      if (card) {
        this.host.trace({
          workflow: frame.workflow,
          node: frame.node,
          card: frame.card,
          cardType: card.type,
        });
        const result = await this.runCard(frame, card);
        if (result.kind === 'wait' || result.kind === 'stop') return;
        if (result.kind === 'goto') this.moveTo(frame, result.node);
        else if (this.top() === frame) frame.card++;
        await this.host.save();
        continue;
      }
      if (!(await this.leave(frame, node))) return;
      await this.host.save();
    }
  }

  /** Past a node's last card: exit, end, or follow its transition. False when the dialog stops. */
  private async leave(frame: Frame, node: WorkflowNode): Promise<boolean> {
    const left = (next?: string) =>
      this.host.trace({ workflow: frame.workflow, node: frame.node, ...(next !== undefined && { next }) });
    if (node.type === 'end' || node.type === 'exit') left(node.type);
    if (node.type === 'end') {
      await this.endConversation();
      return false;
    }
    if (node.type === 'exit') {
      this.dialog.frames.pop();
      await this.host.finishWorkflow(frame, 'completed');
      // The caller resumes after its goto card (already counted when the sub-workflow started).
      return true;
    }
    const next = await this.transition(frame, node);
    left(next);
    if (next === undefined) {
      // Nowhere to go: this dialog is over; the next message starts from the beginning.
      for (const f of [...this.dialog.frames].reverse()) await this.host.finishWorkflow(f, 'completed');
      this.dialog.frames = [];
      this.dialog.autonomous = undefined;
      return true;
    }
    this.moveTo(frame, next);
    return true;
  }

  private async transition(frame: Frame, node: WorkflowNode): Promise<string | undefined> {
    if (node.next === undefined) return undefined;
    if (typeof node.next === 'string') return node.next;
    for (const [j, option] of node.next.entries()) {
      if (option.when === undefined) return option.to;
      if ((await this.host.run(unitIds.when(frame.workflow, frame.node, j))) === true) return option.to;
    }
    return undefined;
  }

  private async runCard(frame: Frame, card: Card): Promise<CardResult> {
    const { workflow, node, card: i } = frame;
    switch (card.type) {
      case 'say': {
        const message = await this.field(frame, 'message', card.message);
        if (!isJsonObject(message)) throw new DialogError('The message of a say card must be an object');
        await this.host.reply(message);
        return { kind: 'next' };
      }
      case 'code':
        await this.host.run(unitIds.card(workflow, node, i));
        return { kind: 'next' };
      case 'expression':
        return (await this.host.run(unitIds.condition(workflow, node, i))) === true
          ? { kind: 'goto', node: card.to }
          : { kind: 'next' };
      case 'capture':
        this.dialog.waiting = { attempts: 0 };
        await this.host.reply(await this.prompt(frame, card, 'prompt'));
        await this.host.save();
        return { kind: 'wait' };
      case 'set':
        await this.host.setVariable(card.variable, await this.field(frame, 'value', card.value));
        return { kind: 'next' };
      case 'action': {
        const input = card.input === undefined ? {} : await this.field(frame, 'input', card.input);
        const given = input ?? {};
        if (!isJsonObject(given)) throw new DialogError('The input of an action card must be an object');
        const output = await this.host.callAction(card.action, given);
        if (card.output) await this.host.setVariable(card.output, output);
        return { kind: 'next' };
      }
      case 'goto':
        await this.enterWorkflow(frame, card.workflow, card.node);
        return { kind: 'next' };
      case 'end':
        await this.endConversation();
        return { kind: 'stop' };
      case 'knowledge':
        return this.knowledge(frame, card);
      case 'tableFind':
      case 'tableInsert':
      case 'tableUpdate':
      case 'tableUpsert':
      case 'tableDelete':
        return this.table(frame, card);
      case 'aiGenerate':
        return this.aiGenerate(frame, card);
      case 'aiTask':
        return this.aiTask(frame, card);
      case 'aiTransition':
        return this.aiTransition(frame, card);
      case 'knowledgeAnswer':
        return this.knowledgeAnswer(frame, card);
      case 'autonomous': {
        const outcome = await runAutonomous({
          host: this.host,
          frame,
          card,
          field: (name, value) => this.field(frame, name, value),
        });
        if (outcome.kind !== 'workflow') return outcome;
        await this.enterWorkflow(frame, outcome.workflow);
        return { kind: 'next' };
      }
      case 'handoff':
        return this.handoff(frame, card);
    }
  }

  /**
   * Tells the user the card's message, opens the handoff and waits where it stands: the dialog moves
   * on when the handoff closes (`closeHandoff`), not at the user's messages, which are the agent's.
   */
  private async handoff(frame: Frame, card: Extract<Card, { type: 'handoff' }>): Promise<CardResult> {
    if (card.message !== undefined) await this.sayInstead(frame, card, 'message', '');
    const team = card.team === undefined ? undefined : textOf(await this.field(frame, 'team', card.team));
    const id = await this.host.startHandoff({
      reason: textOf(await this.field(frame, 'reason', card.reason)),
      ...(team !== undefined && { team }),
      ...(card.timeout !== undefined && { timeoutSeconds: card.timeout }),
      ...(card.onResolved !== undefined && { onResolved: card.onResolved }),
      ...(card.onTimeout !== undefined && { onTimeout: card.onTimeout }),
    });
    this.dialog.handoff = { id };
    await this.host.save();
    return { kind: 'wait' };
  }

  /**
   * The handoff the dialog waits on closed: on to the card's `onResolved` or `onTimeout`, or the card
   * after it. The caller runs the dialog on.
   */
  async closeHandoff(outcome: 'resolved' | 'timed_out'): Promise<void> {
    const frame = this.top();
    const card = this.cardAt(frame);
    this.dialog.handoff = undefined;
    if (card?.type === 'handoff') {
      const to = outcome === 'resolved' ? card.onResolved : card.onTimeout;
      if (to !== undefined) this.moveTo(frame, to);
      else frame.card++;
    }
    await this.host.save();
  }

  /** Runs a workflow from its entry node (or `node`) above `frame`, which goes on past its card after. */
  private async enterWorkflow(frame: Frame, workflow: string, node?: string): Promise<void> {
    const target = this.host.pkg.workflows[workflow];
    const entry = node ?? target?.nodes.find((n) => n.type === 'entry' || n.type === 'start')?.id;
    if (!entry) throw new DialogError(`Workflow "${workflow}" has no entry node`);
    frame.card++;
    this.dialog.frames.push({
      workflow,
      node: entry,
      card: 0,
      recordId: await this.host.startWorkflow(workflow),
    });
  }

  /** A model call of an AI card (see generateText). */
  private async generate(
    card: AiCard,
    promptSource: string,
    request: { systemPrompt: string; messages: JsonObject[]; responseFormat?: 'json_object' },
  ): Promise<string> {
    const args: JsonObject = {
      model: card.model ?? 'best',
      ...request,
      ...(card.maxTokens !== undefined && { maxTokens: card.maxTokens }),
      ...(card.temperature !== undefined && { temperature: card.temperature }),
      meta: { promptSource },
    };
    const started = Date.now();
    const generated = await generateText(this.host, `The ${card.type} card`, args);
    const node = this.dialog.frames.at(-1)?.node ?? '';
    const line = modelCallLine(generated, args.model, started);
    this.host.log('info', `${card.type} card in node "${node}": ${line.text}`, line.call);
    return typeof generated.output === 'string' ? generated.output : '';
  }

  private async aiGenerate(frame: Frame, card: Extract<Card, { type: 'aiGenerate' }>): Promise<CardResult> {
    const instructions = textOf(await this.field(frame, 'instructions', card.instructions));
    const context =
      card.context === undefined
        ? this.host.userText()
        : textOf(await this.field(frame, 'context', card.context));
    const text = await this.generate(card, AI_PROMPT_SOURCES.aiGenerate, {
      systemPrompt: instructions,
      messages: [{ role: 'user', type: 'text', content: context }],
    });
    if (card.variable) await this.host.setVariable(card.variable, text);
    if (card.say ?? card.variable === undefined) await this.host.reply({ type: 'text', text });
    return { kind: 'next' };
  }

  /**
   * Extracts an object matching the card's schema: the model answers JSON; an answer that is not JSON or
   * does not match is shown the error and asked once more; then the card fails, to `onFailure` with the
   * reason when it has one.
   */
  private async aiTask(frame: Frame, card: Extract<Card, { type: 'aiTask' }>): Promise<CardResult> {
    const instructions = textOf(await this.field(frame, 'instructions', card.instructions));
    const validate = this.validatorOf(card.schema);
    const answer = await this.askForJson(card, AI_PROMPT_SOURCES.aiTask, {
      systemPrompt: `${instructions}\n\nAnswer with one JSON object that matches this JSON Schema, and nothing else:\n${JSON.stringify(card.schema)}`,
      input: await this.aiInput(frame, card),
      check: (value) => {
        if (value !== undefined && validate(value)) return { value };
        const problem =
          value === undefined
            ? 'the answer is not JSON'
            : (validate.errors ?? [])
                .map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`)
                .join('; ');
        return {
          problem,
          again: `That answer does not match the schema: ${problem}. Answer again with the JSON object only.`,
        };
      },
    });
    if ('value' in answer) {
      await this.host.setVariable(card.variable, answer.value);
      return { kind: 'next' };
    }
    const reason = `the model's answer did not match the schema after ${AI_TASK_ATTEMPTS} tries: ${answer.problem}`;
    this.host.log('warn', `The aiTask card into ${card.variable}: ${reason}`);
    if (card.onFailure === undefined)
      throw new DialogError(`The aiTask card into ${card.variable} failed: ${reason}`);
    if (card.reason) await this.host.setVariable(card.reason, reason);
    return { kind: 'goto', node: card.onFailure };
  }

  /**
   * Chooses a transition: the model answers one of the labels (their descriptions its only vocabulary),
   * or `none`; an answer that is neither is asked again once, then taken as `none`, with a warning.
   */
  private async aiTransition(
    frame: Frame,
    card: Extract<Card, { type: 'aiTransition' }>,
  ): Promise<CardResult> {
    const instructions =
      card.instructions === undefined
        ? ''
        : textOf(await this.field(frame, 'instructions', card.instructions));
    const labels = card.transitions.map((t) => t.label);
    const systemPrompt = [
      instructions,
      'Choose the one label that fits the message, from this list (a label: what it means):',
      ...card.transitions.map((t) => `- ${t.label}: ${t.description}`),
      `Answer "${AI_TRANSITION_NONE}" when none of them fits. Answer with one JSON object and nothing else: {"label": "<the label>"}`,
    ]
      .filter((line) => line !== '')
      .join('\n');
    const answer = await this.askForJson(card, AI_PROMPT_SOURCES.aiTransition, {
      systemPrompt,
      input: await this.aiInput(frame, card),
      check: (value) => {
        const label = isJsonObject(value) ? value.label : undefined;
        if (typeof label === 'string' && (label === AI_TRANSITION_NONE || labels.includes(label)))
          return { value: label };
        return {
          problem: 'no label',
          again: `That is not one of the labels. Answer {"label": …} with one of: ${[...labels, AI_TRANSITION_NONE].join(', ')}.`,
        };
      },
    });
    if (!('value' in answer))
      this.host.log(
        'warn',
        `The aiTransition card: the model named no label in ${AI_TASK_ATTEMPTS} tries; none applies`,
      );
    const transition = 'value' in answer ? card.transitions.find((t) => t.label === answer.value) : undefined;
    if (card.variable) await this.host.setVariable(card.variable, transition?.label ?? null);
    if (transition) return { kind: 'goto', node: transition.to };
    return card.onNone !== undefined ? { kind: 'goto', node: card.onNone } : { kind: 'next' };
  }

  /** What an aiTask or aiTransition card reads: its `input`, else the user's message. */
  private async aiInput(frame: Frame, card: { input?: Json }): Promise<string> {
    return card.input === undefined
      ? this.host.userText()
      : textOf(await this.field(frame, 'input', card.input));
  }

  /**
   * Asks the model for a JSON answer that `check` accepts (undefined: the answer is not JSON). One it
   * refuses is shown to the model with `check`'s words, and asked once more (AI_TASK_ATTEMPTS in all).
   * Answers the accepted value, or the last problem.
   */
  private async askForJson<T extends Json>(
    card: AiCard,
    promptSource: string,
    ask: {
      systemPrompt: string;
      input: string;
      check: (value: Json | undefined) => { value: T } | { problem: string; again: string };
    },
  ): Promise<{ value: T } | { problem: string }> {
    const messages: JsonObject[] = [{ role: 'user', type: 'text', content: ask.input }];
    let problem = '';
    for (let attempt = 0; attempt < AI_TASK_ATTEMPTS; attempt++) {
      const output = await this.generate(card, promptSource, {
        systemPrompt: ask.systemPrompt,
        messages,
        responseFormat: 'json_object',
      });
      const checked = ask.check(parsedJson(output));
      if ('value' in checked) return checked;
      problem = checked.problem;
      messages.push(
        { role: 'assistant', type: 'text', content: output },
        { role: 'user', type: 'text', content: checked.again },
      );
    }
    return { problem };
  }

  private validatorOf(schema: object): ValidateFunction {
    let validate = this.validators.get(schema);
    if (!validate) {
      validate = aiTaskAjv.compile(schema);
      this.validators.set(schema, validate);
    }
    return validate;
  }

  /**
   * A table card: one Tables API call as the bot, through bot code's `client` (the same checks, roles
   * and limits). A call the API refuses (a bad filter, a refused row) fails the turn, naming the card.
   */
  private async table(frame: Frame, card: TableCard): Promise<CardResult> {
    const definition = findPackageTable(this.host.pkg.tables, card.table);
    const table = definition?.name ?? card.table;
    const failed = (reason: string) =>
      new DialogError(`The ${card.type} card on table ${table} failed: ${reason}`);
    const call = async (operation: string, args: JsonObject): Promise<JsonObject> => {
      let answer: JsonObject;
      try {
        answer = await this.host.callClient(operation, { table, ...args });
      } catch (err) {
        // A fault of the server (5xx) is not the card's: the turn is tried again.
        if (err instanceof ApiError && err.code < 500) throw failed(`${err.type}: ${err.message}`);
        throw err;
      }
      const { errors, warnings } = answer;
      if (Array.isArray(errors) && errors.length > 0) throw failed(errors.map(String).join('; '));
      if (Array.isArray(warnings) && warnings.length > 0)
        this.host.log('warn', `The ${card.type} card on table ${table}: ${warnings.map(String).join('; ')}`);
      return answer;
    };
    const object = async (name: string, value: Json): Promise<JsonObject> => {
      const rendered = await this.field(frame, name, value);
      if (!isJsonObject(rendered))
        throw failed(`its ${name} must be an object, not ${JSON.stringify(rendered)}`);
      return rendered;
    };
    const first = (rows: Json | undefined): Json => (Array.isArray(rows) ? (rows[0] ?? null) : null);
    let result: Json;
    switch (card.type) {
      case 'tableFind': {
        const filter = card.filter === undefined ? undefined : await object('filter', card.filter);
        const { rows } = await call('findTableRows', {
          ...(filter && { filter }),
          ...(card.orderBy !== undefined && { orderBy: card.orderBy }),
          ...(card.orderDirection !== undefined && { orderDirection: card.orderDirection }),
          limit: card.limit ?? 20,
        });
        const found = Array.isArray(rows) ? rows : [];
        if (card.variable) await this.host.setVariable(card.variable, found);
        return found.length === 0 && card.onNotFound !== undefined
          ? { kind: 'goto', node: card.onNotFound }
          : { kind: 'next' };
      }
      case 'tableInsert':
        result = first((await call('createTableRows', { rows: [await object('row', card.row)] })).rows);
        break;
      case 'tableUpdate': {
        const given = await this.field(frame, 'rowId', card.rowId);
        const id = rowId(given);
        if (id === undefined)
          throw failed(`its rowId must be a row id (a whole number), not ${JSON.stringify(given)}`);
        const values = await object('values', card.values);
        result = first((await call('updateTableRows', { rows: [{ ...values, id }] })).rows);
        break;
      }
      case 'tableUpsert': {
        const keyColumn = card.keyColumn ?? definition?.keyColumn;
        const row = await object('row', card.row);
        const { inserted, updated } = await call('upsertTableRows', {
          rows: [row],
          ...(keyColumn !== undefined && { keyColumn }),
        });
        result = first(inserted) ?? first(updated);
        break;
      }
      case 'tableDelete':
        result =
          (await call('deleteTableRows', { filter: await object('filter', card.filter) })).deletedRows ?? 0;
        break;
    }
    if (card.variable) await this.host.setVariable(card.variable, result);
    return { kind: 'next' };
  }

  private async knowledge(frame: Frame, card: Extract<Card, { type: 'knowledge' }>): Promise<CardResult> {
    const question =
      card.question === undefined ? undefined : textOf(await this.field(frame, 'question', card.question));
    const results = await this.host.searchKnowledge([card.knowledgeBase], question, card.limit ?? 3);
    if (card.variable) await this.host.setVariable(card.variable, results);
    const best = results[0];
    if (card.answer && best) {
      await this.host.reply({
        type: 'text',
        text: `${best.text}\n\nSource: ${best.file.title ?? best.file.key}`,
      });
    } else if (card.answer && (card.notFound !== undefined || card.onNotFound === undefined)) {
      await this.sayInstead(frame, card, 'notFound', NOT_FOUND);
    }
    return !best && card.onNotFound !== undefined
      ? { kind: 'goto', node: card.onNotFound }
      : { kind: 'next' };
  }

  /**
   * Answers the question from the passages the knowledge bases' search finds at `minScore` or more: the
   * model is given them numbered, answers from them alone citing their numbers, and the reply lists the
   * cited passages' files. Without such a passage the model is not called; without an answer in them
   * (the model says so), the card says `noAnswer` and goes to `onNoAnswer`.
   */
  private async knowledgeAnswer(
    frame: Frame,
    card: Extract<Card, { type: 'knowledgeAnswer' }>,
  ): Promise<CardResult> {
    const question =
      card.question === undefined ? undefined : textOf(await this.field(frame, 'question', card.question));
    const bases = Array.isArray(card.knowledgeBase) ? card.knowledgeBase : [card.knowledgeBase];
    const found = await this.host.searchKnowledge(bases, question, card.limit ?? 5);
    const passages = found.filter((p) => p.score >= (card.minScore ?? 0));
    const answer =
      passages.length === 0
        ? undefined
        : await this.answerFrom(frame, card, question ?? this.host.userText(), passages);
    if (answer !== undefined) {
      if (card.variable) await this.host.setVariable(card.variable, answer);
      else await this.host.reply({ type: 'text', text: answer });
      return { kind: 'next' };
    }
    if (card.variable) await this.host.setVariable(card.variable, null);
    if (card.noAnswer !== undefined || card.onNoAnswer === undefined)
      await this.sayInstead(frame, card, 'noAnswer', NO_ANSWER);
    return card.onNoAnswer !== undefined ? { kind: 'goto', node: card.onNoAnswer } : { kind: 'next' };
  }

  /** The reply to the question from the passages, with its sources; undefined when they hold no answer. */
  private async answerFrom(
    frame: Frame,
    card: Extract<Card, { type: 'knowledgeAnswer' }>,
    question: string,
    passages: KnowledgeResult[],
  ): Promise<string | undefined> {
    const instructions =
      card.instructions === undefined
        ? ''
        : textOf(await this.field(frame, 'instructions', card.instructions));
    const output = await this.generate(card, AI_PROMPT_SOURCES.knowledgeAnswer, {
      systemPrompt: answerPrompt(instructions, passages),
      messages: [{ role: 'user', type: 'text', content: question }],
    });
    const answer = readAnswer(output, passages.length);
    if (!answer) return undefined;
    const links = new Map<string, string | undefined>();
    const sources: Source[] = [];
    for (const number of answer.cited) {
      const file = passages[number - 1]?.file;
      if (!file) continue;
      if (!links.has(file.id)) links.set(file.id, await fileLink(this.host, file.id));
      const url = links.get(file.id);
      sources.push({ number, title: file.title ?? file.key, ...(url !== undefined && { url }) });
    }
    return replyText(answer.text, sources);
  }

  /** A card's message for when it found nothing (text or a whole message), or its default. */
  private async sayInstead<F extends string>(
    frame: Frame,
    card: { type: string } & Partial<Record<F, Json>>,
    field: F,
    fallback: string,
  ): Promise<void> {
    const given = card[field];
    const message = given === undefined ? fallback : await this.field(frame, field, given);
    if (typeof message === 'string') await this.host.reply({ type: 'text', text: message });
    else if (isJsonObject(message)) await this.host.reply(message);
    else throw new DialogError(`The ${field} of a ${card.type} card must be text or a message`);
  }

  private async endConversation(): Promise<void> {
    for (const frame of [...this.dialog.frames].reverse()) await this.host.finishWorkflow(frame, 'completed');
    this.dialog.frames = [];
    this.dialog.waiting = undefined;
    this.dialog.autonomous = undefined;
    await this.host.save();
    await this.host.endConversation();
  }

  /** A capture's prompt (or retry message): a choice capture offers its choices. */
  private async prompt(
    frame: Frame,
    card: Extract<Card, { type: 'capture' }>,
    field: 'prompt' | 'retryMessage',
  ) {
    const source = card[field] ?? card.prompt;
    const rendered =
      source === undefined ? undefined : await this.field(frame, field in card ? field : 'prompt', source);
    const message: JsonObject =
      typeof rendered === 'string'
        ? { type: 'text', text: rendered }
        : isJsonObject(rendered)
          ? rendered
          : { type: 'text', text: defaultPrompt(card.kind) };
    if (card.kind === 'choice' && card.choices && message.type === 'text') {
      return { type: 'choice', text: message.text ?? defaultPrompt('choice'), options: card.choices };
    }
    return message;
  }

  /** A card field's value: its JSON, or what its template unit renders when it holds `{{ }}`. */
  private async field(frame: Frame, name: string, value: Json): Promise<Json> {
    const unit = unitIds.template(frame.workflow, frame.node, frame.card, name);
    if (unit in this.host.pkg.units) return this.host.run(unit);
    return value;
  }

  private moveTo(frame: Frame, node: string): void {
    frame.node = node;
    frame.card = 0;
  }

  private top(): Frame {
    const frame = this.dialog.frames[this.dialog.frames.length - 1];
    if (!frame) throw new DialogError('No workflow is running');
    return frame;
  }

  private node(frame: Frame): WorkflowNode {
    const node = this.host.pkg.workflows[frame.workflow]?.nodes.find((n) => n.id === frame.node);
    if (!node) throw new DialogError(`Workflow "${frame.workflow}" has no node "${frame.node}"`);
    return node;
  }

  private cardAt(frame: Frame): Card | undefined {
    return this.node(frame).cards?.[frame.card];
  }
}

const NOT_FOUND = 'Sorry, I found nothing about that.';
const NO_ANSWER = "Sorry, I don't know: I found no answer to that in what I know.";

/** A row id from a template's value: a whole number, or text that is one. */
function rowId(value: Json): number | undefined {
  const id = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  return typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

/** A template's value as text: a string as is, anything else as JSON. */
function textOf(value: Json): string {
  return typeof value === 'string' ? value : value === null ? '' : JSON.stringify(value);
}

function defaultPrompt(kind: string): string {
  switch (kind) {
    case 'number':
      return 'Please enter a number.';
    case 'email':
      return 'Please enter an email address.';
    case 'choice':
      return 'Please choose an option.';
    default:
      return 'Please answer.';
  }
}

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

/** The value a capture card takes from a message, or undefined when the message does not give one. */
export function extract(card: Extract<Card, { type: 'capture' }>, payload: JsonObject): Json | undefined {
  const text = previewOf(payload).trim();
  switch (card.kind) {
    case 'text':
      return text === '' ? undefined : text;
    case 'number': {
      if (!/^[-+]?\d+([.,]\d+)?$/.test(text)) return undefined;
      return Number(text.replace(',', '.'));
    }
    case 'email':
      return EMAIL.test(text) ? text.toLowerCase() : undefined;
    case 'choice': {
      const wanted = text.toLowerCase();
      const match = (card.choices ?? []).find(
        (c) => c.value.toLowerCase() === wanted || c.label.toLowerCase() === wanted,
      );
      return match?.value;
    }
  }
}
