import type { FastifyBaseLogger } from 'fastify';
import type { BotActor, TurnScope } from '../domain/workspace/actors.ts';
import type { ClaimedEvent } from '../domain/queue/event-queue.ts';
import type { Domain } from '../domain/index.ts';
import { CallChain } from './call-chain.ts';
import { stateKeyText } from '../domain/runtime/states.ts';
import type { StateEntry, StateKey } from '../domain/runtime/states.ts';
import { derivedId, newId } from '../domain/shared/ids.ts';
import { CONVERSATION_STARTED_EVENT } from '../domain/webchat/webchat.ts';
import { HANDOFF_EVENT_TYPES } from '../domain/handoffs/schemas.ts';
import { DialogRunner } from './dialog.ts';
import { DialogError } from './dialog-host.ts';
import { UnitFailure } from './failures.ts';
import { unlessMissing } from '../domain/shared/errors.ts';
import { isJsonObject, toJsonValue } from '../domain/shared/json.ts';
import type { DialogHost, HandoffRequest } from './dialog-host.ts';
import { DIALOG_STATE, emptyDialog, isDialogState, VARIABLES_STATE } from './dialog-state.ts';
import type { DialogState, Frame } from './dialog-state.ts';
import { buildEventObject, previewOf } from './event-object.ts';
import type { EventKb, KnowledgeResult, TriggerInfo } from './event-object.ts';
import type { BotClient } from './bot-client.ts';
import type { LoadedBot } from './loaded-bot.ts';
import { unitIds } from '../package/format.ts';
import type { HookType, VariableScope, WorkflowNode } from '../package/format.ts';
import type { CallContext, HostHandler, Json, JsonObject, Sandbox, Scopes } from './sandbox/types.ts';
import type { User, Conversation, Message } from '../domain/runtime/schemas.ts';
import type { BotLogCall, DraftTestStep } from '../domain/bots/schemas.ts';
import { COGNITIVE_OPERATIONS } from '../contract/cognitive/index.ts';
import type { WorkPlace } from './leased-work.ts';

export type TurnResult = 'processed' | 'ignored';

/** Everything one turn needs from the engine. */
export interface TurnServices {
  domain: Domain;
  sandbox: Sandbox;
  client: BotClient;
  /** The server's own log, for what cannot be told to the bot's. */
  serverLog: FastifyBaseLogger;
  /** The turn's place among those of the engine, which it leaves while it waits on a model. */
  place: WorkPlace;
}

/** Bot code's operations that wait on a model's answer: a turn waits for them away from its place. */
const MODEL_OPERATIONS: ReadonlySet<string> = new Set(COGNITIVE_OPERATIONS.map((op) => op.id));

/**
 * One event's turn: the incoming hooks, the workflows, the outgoing hooks on each reply, then
 * `after_turn_end`. The dialog and the variables are checkpointed after every card (written before the
 * next side effect), so a turn that a crash interrupted resumes where it stood, and the replies it had
 * sent are not sent again.
 */
export class Turn implements DialogHost, TurnScope {
  readonly actor: BotActor;
  dialog: DialogState = emptyDialog();
  private scopes: Scopes = { workflow: {}, conversation: {}, user: {}, bot: {}, turn: {} };
  /** JSON of each scope as last stored, to store only what changed. */
  private stored: Record<string, string> = {};
  /** JSON of scope objects, which are replaced, never changed in place (the dialog is changed in place). */
  private readonly texts = new WeakMap<object, string>();
  /** A card ended since the dialog was last stored (see `save`). */
  private checkpointDue = false;
  /** The last checkpoint write started (see `checkpoint`). */
  private checkpointWrite: Promise<void> = Promise.resolve();
  /** A model answered since the last checkpoint write started (see `callClient`). */
  private answerUnsaved = false;
  /** The workflow run whose variables `scopes.workflow` holds. */
  private workflowOwner: { id: string; workflow: string } | undefined;
  private eventObject: JsonObject = {};
  /** `event.kb`: what the knowledge cards of this turn found. */
  private kb: EventKb = { included: [], results: [] };
  /** The action calls the turn's code makes, bounded together. */
  private readonly calls = CallChain.root();
  /** The turn stored the end of its event with its last write (otherwise the dispatcher records it). */
  endRecorded = false;
  /** What the dialog ran, kept for a draft twin's turns only (DraftTests). */
  private readonly steps: DraftTestStep[] = [];
  /** The last workflow run the turn left, and its variables then (for a draft twin's turn). */
  private lastWorkflow: { name: string; variables: JsonObject } | undefined;
  private message?: Message;
  private conversation?: Conversation;
  private user?: User;

  constructor(
    private readonly s: TurnServices,
    private readonly loaded: LoadedBot,
    private readonly event: ClaimedEvent,
  ) {
    this.actor = { botId: loaded.bot.botId, workspaceId: loaded.bot.workspaceId };
  }

  get pkg() {
    return this.loaded.pkg;
  }

  /** TurnScope: the event this turn answers. */
  get eventId(): string {
    return this.event.id;
  }

  async execute(): Promise<TurnResult> {
    try {
      return await this.runTurn();
    } catch (err) {
      // A draft's test shows where its turn failed, and why.
      await this.recordTest(err instanceof Error ? err.message : String(err));
      throw err;
    } finally {
      // What the turn's code started and did not wait for may not go on working after it.
      this.calls.end();
    }
  }

  private async runTurn(): Promise<TurnResult> {
    const { domain } = this.s;
    const isMessage = this.event.type === 'message_created' && this.event.messageId !== undefined;
    // Only what no longer exists ends a turn here; a store that fails to answer fails the turn, which is tried again.
    // The records and the states of the variables and the dialog (their keys are the event's ids), at once.
    const { messageId, conversationId, userId } = this.event;
    const { message, conversation, user, states } = await domain.turnRecords.read(this.actor, {
      messageId: isMessage ? messageId : undefined,
      conversationId: conversationId || undefined,
      userId: userId || undefined,
      stateKeys: this.scopeStateKeys(conversationId, userId),
    });
    // The message (or its conversation) was deleted before its turn: nothing to answer.
    if (isMessage && !message) return 'ignored';
    if (conversationId && !conversation) return 'ignored';
    this.message = message;
    this.conversation = conversation;
    this.user = user;

    await this.loadScopes(states);
    // This turn ran to its end before, but the end was not recorded (the store failed, or the process died).
    if (this.dialog.turn?.eventId === this.event.id && !this.dialog.turn.running) return 'processed';
    const resuming = this.dialog.turn?.eventId === this.event.id && this.dialog.turn.running;
    if (!resuming) this.dialog.turn = { eventId: this.event.id, replies: 0, running: true };
    const runner = new DialogRunner(this);
    // A dialog whose node the deployed version lacks starts over, before its start point is chosen.
    if (!resuming) await runner.startOverWhenLost();
    const start = resuming ? undefined : this.startPoint(isMessage);
    // `event.trigger` is the trigger that started this turn's workflow, if one did (kept for a resumed turn).
    if (!resuming) this.dialog.trigger = start?.trigger;
    // What knowledge cards found before a crash stays `event.kb` for the rest of the turn.
    if (resuming && this.dialog.turn?.kb) this.kb = this.dialog.turn.kb;
    this.eventObject = buildEventObject({
      botId: this.actor.botId,
      event: this.event,
      ...(this.message && { message: this.message }),
      ...(this.conversation && { conversation: this.conversation }),
      ...(this.user && { user: this.user }),
      ...(this.dialog.trigger && { trigger: this.dialog.trigger }),
      dialog: this.position(),
      kb: this.kb,
    });

    if (!resuming) {
      const stopped = await this.incomingHooks(isMessage);
      if (stopped) return this.finishTurn('ignored');
    }
    const handoffClosed = this.handoffClosed();
    let handled = true;
    if (resuming) {
      await runner.run();
    } else if (handoffClosed) {
      await runner.closeHandoff(handoffClosed);
      await runner.run();
    } else if (this.message && this.dialog.handoff) {
      // The user's message is the agent's while the handoff is open: the hooks saw it, the workflows do not.
      handled = false;
    } else if (this.message && this.dialog.waiting && this.dialog.frames.length > 0) {
      if (await runner.answer(this.message)) await runner.run();
    } else if (start) {
      await runner.start(start.workflow, start.node);
      await runner.run();
    } else {
      handled = false;
    }
    return this.finishTurn(handled ? 'processed' : 'ignored');
  }

  /** Where a new dialog starts for this event, if anywhere. */
  private startPoint(
    isMessage: boolean,
  ): { workflow: string; node: string; trigger?: TriggerInfo } | undefined {
    const triggers = (kind: string, match: (n: WorkflowNode) => boolean = () => true) => {
      for (const [workflow, definition] of Object.entries(this.pkg.workflows)) {
        const node = definition.nodes.find(
          (n) => n.type === 'trigger' && n.trigger?.kind === kind && match(n),
        );
        if (node) return { workflow, node: node.id, trigger: { flowId: workflow, nodeId: node.id } };
      }
      return undefined;
    };
    if (isMessage) {
      if (this.dialog.handoff || (this.dialog.waiting && this.dialog.frames.length > 0)) return undefined;
      if (!this.dialog.started) {
        const started = triggers('conversation_started');
        if (started) return started;
      }
      const received = triggers('message_received');
      if (received) return received;
      const main = this.pkg.workflows.main?.nodes.find((n) => n.type === 'start');
      return main ? { workflow: 'main', node: main.id } : undefined;
    }
    // A webchat was opened on a new conversation: where a bot greets before the first message.
    if (this.event.type === CONVERSATION_STARTED_EVENT && !this.dialog.started) {
      const started = triggers('conversation_started');
      if (started) return started;
    }
    const custom = triggers(
      'custom_event',
      (n) => n.trigger?.kind === 'custom_event' && n.trigger.event === this.event.type,
    );
    if (custom) return { ...custom, trigger: { ...custom.trigger, eventName: this.event.type } };
    const [, workflow, node] = /^schedule:([^:]+):(.+)$/.exec(this.event.type) ?? [];
    if (workflow && node)
      return { workflow, node, trigger: { flowId: workflow, nodeId: node, eventName: this.event.type } };
    return undefined;
  }

  /** How the handoff the dialog waits on closed, when this event is its close. */
  private handoffClosed(): 'resolved' | 'timed_out' | undefined {
    const waitingOn = this.dialog.handoff?.id;
    if (waitingOn === undefined || this.dialog.frames.length === 0) return undefined;
    const { handoff } = this.event.payload;
    if (!isJsonObject(handoff) || handoff.id !== waitingOn) return undefined;
    if (this.event.type === HANDOFF_EVENT_TYPES.resolved) return 'resolved';
    if (this.event.type === HANDOFF_EVENT_TYPES.timedOut) return 'timed_out';
    return undefined;
  }

  /** The incoming hooks; true when one stopped the message. */
  private async incomingHooks(isMessage: boolean): Promise<boolean> {
    const before: HookType = isMessage ? 'before_incoming_message' : 'before_incoming_event';
    // One hook at a time: a hook sees what the ones before it did, and a stop ends the turn at once.
    for (const unit of this.pkg.hooks[before] ?? []) {
      const result = await this.run(unit);
      if (!isJsonObject(result)) continue;
      if (result.stop === true) return true;
      if (isJsonObject(result.payload)) this.rewrite(result.payload);
    }
    await this.hooks(isMessage ? 'after_incoming_message' : 'after_incoming_event');
    return false;
  }

  /** A hook rewrote the message (or the event's payload): the rest of the turn sees the new one. */
  private rewrite(payload: JsonObject): void {
    this.eventObject.payload = payload;
    this.eventObject.preview = previewOf(payload);
    if (this.message) {
      const { type, ...content } = payload;
      this.message = {
        ...this.message,
        type: typeof type === 'string' ? type : this.message.type,
        payload: content,
      };
    }
  }

  /** The turn's end: its last hooks, then its dialog and variables stored with the end of its event. */
  private async finishTurn(status: TurnResult): Promise<TurnResult> {
    await this.hooks('after_turn_end');
    if (this.dialog.turn) this.dialog.turn.running = false;
    await this.persist(status);
    this.endRecorded = true;
    await this.recordTest();
    return status;
  }

  /**
   * A draft twin's turn: what it ran and the variables after it (and why it failed, if it did), for the
   * test panel. A record lost is the server log's: it fails no turn.
   */
  private async recordTest(error?: string): Promise<void> {
    if (this.loaded.bot.draftOf === undefined || !this.conversation) return;
    try {
      await this.s.domain.draftTests.record(this.actor.botId, {
        eventId: this.event.id,
        conversationId: this.conversation.id,
        messageId: this.message?.id,
        steps: this.steps,
        variables: {
          conversation: this.scopes.conversation,
          user: this.scopes.user,
          ...(this.workflowOwner
            ? { workflow: this.scopes.workflow, workflowName: this.workflowOwner.workflow }
            : { workflow: this.lastWorkflow?.variables ?? {}, workflowName: this.lastWorkflow?.name }),
        },
        error,
      });
    } catch (err) {
      this.s.serverLog.warn({ err, eventId: this.event.id }, 'a test turn of a draft was not recorded');
    }
  }

  private async hooks(type: HookType, extra: Partial<CallContext> = {}): Promise<Json[]> {
    const values: Json[] = [];
    for (const unit of this.pkg.hooks[type] ?? []) values.push(await this.run(unit, extra));
    return values;
  }

  // DialogHost

  async run(unit: string, extra: Partial<CallContext> = {}): Promise<Json> {
    await this.syncWorkflowScope();
    const context: CallContext = { event: this.eventObject, ...this.scopes, env: this.loaded.env, ...extra };
    const serve = this.s.client.handler(this.caller, this.calls);
    // Bot code's first side effect is its first host call: the checkpoint due is written before it, not
    // before every call into bot code (most make none). It holds what it held before this call began.
    let checkpointFailure: Error | undefined;
    const host: HostHandler = async (call) => {
      try {
        await this.checkpoint();
      } catch (err) {
        checkpointFailure ??= err instanceof Error ? err : new Error(String(err));
        throw new Error('the turn could not save its progress; this call was not made');
      }
      return serve(call);
    };
    const outcome = await this.s.sandbox.call(this.loaded.program, unit, context, host);
    // Whatever the code did with the error, the turn fails, and is tried again from its last checkpoint.
    if (checkpointFailure !== undefined) throw checkpointFailure;
    this.s.domain.botLogs.append(
      this.actor.botId,
      outcome.logs.map((line) => ({ ...line, timestamp: line.time, ...this.logRefs() })),
    );
    if (!outcome.ok) {
      const message = `${unitName(unit)} failed (${outcome.kind}): ${outcome.message}`;
      throw new UnitFailure(unit, outcome.kind, message);
    }
    this.scopes = outcome.scopes;
    return outcome.value;
  }

  async reply(message: JsonObject): Promise<void> {
    if (!this.dialog.turn) throw new Error('no turn is running');
    const n = ++this.dialog.turn.replies;
    let outgoing: JsonObject | undefined = message;
    for (const unit of this.pkg.hooks.before_outgoing_message ?? []) {
      const value = await this.run(unit, { message: outgoing });
      if (!isJsonObject(value)) continue;
      if (value.stop === true) {
        outgoing = undefined;
        break;
      }
      if (isJsonObject(value.message)) outgoing = value.message;
    }
    if (!outgoing) return;
    if (!this.conversation) {
      this.log('warn', 'A reply was dropped: this event has no conversation to reply in');
      return;
    }
    const { type, ...payload } = outgoing;
    const body = {
      conversationId: this.conversation.id,
      userId: this.actor.botId,
      type: typeof type === 'string' ? type : 'text',
      payload: payload,
    };
    // Each reply's id is made from the event and the reply's number in the turn: a run after an
    // interrupted one (the only run that can find its replies already sent) finds them by it.
    const id = derivedId('message', this.event.id, n);
    const { messages } = this.s.domain;
    const sent =
      (!this.event.firstDelivery && (await unlessMissing(messages.get(this.actor, id)))) ||
      (await messages.create(this.actor, body, { id, eventId: this.event.id }));
    await this.hooks('after_outgoing_message', { message: toJsonValue(sent) });
  }

  /**
   * A checkpoint after a card. It is written before the turn's next side effect (a call into bot code,
   * an integration's action) or at its end, not at once: a turn tried again resumes from the last one
   * written, and repeats only what has no effect twice (moves between cards, replies, which are found
   * by their number in the turn instead of sent again).
   */
  async save(): Promise<void> {
    this.checkpointDue = true;
  }

  /**
   * Writes the dialog and the variables at once: what a turn that failed for good leaves behind, and
   * what an autonomous card must not do twice when the turn is tried again.
   */
  async saveNow(): Promise<void> {
    await this.persist();
  }

  /**
   * Writes the checkpoint due, if one is. Concurrent host calls of bot code all wait for the one write
   * the first of them started.
   */
  private checkpoint(): Promise<void> {
    return this.checkpointDue ? this.persist() : this.checkpointWrite;
  }

  /**
   * Stores the dialog and the variables changed since they were last stored, after any write still
   * running (bot code may leave a host call running, and its checkpoint with it, when it returns).
   */
  private persist(ending?: TurnResult): Promise<void> {
    this.checkpointDue = false;
    this.answerUnsaved = false;
    const write = this.checkpointWrite.catch(() => undefined).then(() => this.writeProgress(ending));
    this.checkpointWrite = write;
    return write;
  }

  /** `ending`: the turn's status, stored with the end of its event (the turn's last write). */
  private async writeProgress(ending?: TurnResult): Promise<void> {
    await this.syncWorkflowScope();
    const entries: StateEntry[] = [];
    for (const scope of ['conversation', 'user', 'bot'] as const) {
      const key = this.scopeKey(scope);
      if (key) entries.push({ key, payload: this.scopes[scope] });
    }
    const workflow = await this.workflowScopeEntry();
    if (workflow) entries.push(workflow);
    // Last: recording the workflow's run above may have changed the dialog.
    if (this.conversation) entries.push({ key: this.dialogKey(this.conversation), payload: this.dialog });
    await this.store(entries, ending);
  }

  /** Names a workflow run; its record is stored only when its variables are (see `storeWorkflowScope`). */
  async startWorkflow(): Promise<string> {
    return newId('workflow');
  }

  async finishWorkflow(frame: Frame, status: 'completed' | 'cancelled'): Promise<void> {
    // Its variables as they end, stored while it still counts as recorded (past this, storing them
    // would record the run again).
    if (this.workflowOwner?.id === frame.recordId) await this.storeWorkflowScope();
    const recorded = this.dialog.recorded ?? [];
    if (!recorded.includes(frame.recordId)) return;
    this.dialog.recorded = recorded.filter((id) => id !== frame.recordId);
    // A workflow record deleted meanwhile (through the API) has nothing left to finish.
    await unlessMissing(this.s.domain.workflows.update(this.actor, frame.recordId, { status }));
  }

  async setVariable(ref: string, value: Json): Promise<void> {
    // The workflow scope must be the running workflow's before it is written.
    await this.syncWorkflowScope();
    const [scope, name] = ref.split('.') as [VariableScope, string];
    this.scopes[scope] = { ...this.scopes[scope], [name]: value };
  }

  async callAction(type: string, input: JsonObject): Promise<Json> {
    await this.checkpoint();
    const result = await this.s.domain.actions.call(this.caller, type, input);
    return result.output;
  }

  async startHandoff(request: HandoffRequest): Promise<string> {
    if (!this.conversation) throw new DialogError('A handoff card needs a conversation to hand over');
    // A side effect: the checkpoint before it, as before an action.
    await this.checkpoint();
    const handoff = await this.s.domain.handoffs.open(this.actor, {
      ...request,
      conversationId: this.conversation.id,
      ...(this.user && { userId: this.user.id }),
      source: 'card',
    });
    this.log('info', `Handed the conversation over (handoff ${handoff.id}): ${request.reason}`);
    return handoff.id;
  }

  async callClient(operation: string, args: JsonObject): Promise<JsonObject> {
    const call = () => this.s.client.call(this.caller, operation, args);
    if (!MODEL_OPERATIONS.has(operation)) {
      // A side effect: the checkpoint before it, as before an action.
      await this.checkpoint();
      const answer = await call();
      return isJsonObject(answer) ? answer : {};
    }
    // A model call changes nothing a turn tried again could repeat wrongly: a turn resumed from the last
    // checkpoint written replays its moves and replies (found by their number) and asks the model again,
    // as it would from one written now, which holds no answer of this call. What a checkpoint written now
    // would keep is an earlier model's answer, used since: then it is written while the model answers
    // (and awaited before the turn goes on). A turn's first model call leaves the checkpoint due for the
    // next side effect or the turn's end: a write less in each turn of a single AI card.
    const written = this.answerUnsaved ? this.checkpoint() : undefined;
    written?.catch(() => undefined); // its failure is thrown below, once the call is back
    const answer = await this.s.place.away(call);
    this.answerUnsaved = true;
    await written;
    return isJsonObject(answer) ? answer : {};
  }

  userText(): string {
    // The user's last message: this turn's (as the incoming hooks left it).
    const preview = this.eventObject.preview;
    return this.message && typeof preview === 'string' ? preview : '';
  }

  async searchKnowledge(
    knowledgeBases: string[],
    question: string | undefined,
    limit: number,
  ): Promise<KnowledgeResult[]> {
    const { domain } = this.s;
    const bases = new Map<string, { id: string; name: string }>();
    for (const knowledgeBase of knowledgeBases) {
      const kb = await domain.knowledgeBases.find(this.actor, knowledgeBase);
      if (!kb) {
        throw new DialogError(
          `No knowledge base "${knowledgeBase}": deploy the package to create it (parley deploy)`,
        );
      }
      bases.set(kb.id, { id: kb.id, name: kb.name });
    }
    const query = question ?? this.userText();
    // One search over them all: one ranking, one limit.
    const { passages } = query.trim()
      ? await domain.fileSearch.search(this.actor, {
          query,
          tags: { kbId: [...bases.keys()] },
          limit,
          contextDepth: 0,
          answersOnly: true,
        })
      : { passages: [] };
    const results = passages.flatMap((p): KnowledgeResult[] => {
      const kb = bases.get(p.file.tags.kbId ?? '');
      if (!kb) return [];
      return [
        {
          text: p.content,
          score: p.score,
          file: {
            id: p.file.id,
            key: p.file.key,
            ...(p.file.tags.title !== undefined && { title: p.file.tags.title }),
          },
          knowledgeBase: kb,
          ...(p.meta.pageNumber !== undefined && { pageNumber: p.meta.pageNumber }),
          ...(p.meta.position !== undefined && { position: p.meta.position }),
        },
      ];
    });
    // `event.kb` for the hooks and cards after this one; kept with the turn, for a resumed turn.
    const current = this.kb;
    const known = new Set(current.included.map((k) => k.id));
    this.kb = {
      included: [...current.included, ...[...bases.values()].filter((kb) => !known.has(kb.id))],
      results: [...current.results, ...results],
    };
    this.eventObject.kb = this.kb;
    if (this.dialog.turn) this.dialog.turn.kb = this.kb;
    return results;
  }

  /** TurnScope: the bot's own action, run in this turn (its event and variables). */
  async runAction(name: string, input: JsonObject): Promise<JsonObject> {
    const value = await this.run(unitIds.action(name), { input: input });
    return value && typeof value === 'object' && !Array.isArray(value) ? value : { value };
  }

  /** The bot as bot code of this turn acts: its own actions run in the turn. */
  private get caller(): BotActor {
    return { ...this.actor, turn: this, calls: this.calls };
  }

  async endConversation(): Promise<void> {
    await this.hooks('after_conversation_end');
  }

  trace(step: DraftTestStep): void {
    if (this.loaded.bot.draftOf !== undefined) this.steps.push(step);
  }

  log(level: 'info' | 'warn' | 'error', message: string, call?: BotLogCall): void {
    this.s.domain.botLogs.append(this.actor.botId, [
      { level, message, ...this.logRefs(), ...(call && { call }) },
    ]);
  }

  // Variables

  /** The keys of the states `loadScopes` reads: the variables of the event's records, and the dialog. */
  private scopeStateKeys(conversationId: string | undefined, userId: string | undefined): StateKey[] {
    const keys: StateKey[] = [{ type: 'bot', id: this.actor.botId, name: VARIABLES_STATE }];
    if (userId) keys.push({ type: 'user', id: userId, name: VARIABLES_STATE });
    if (conversationId) {
      keys.push({ type: 'conversation', id: conversationId, name: VARIABLES_STATE });
      keys.push({ type: 'conversation', id: conversationId, name: DIALOG_STATE });
    }
    return keys;
  }

  /** The turn's variables and dialog, from the states read with the event's records. */
  private async loadScopes(found: Map<string, JsonObject>): Promise<void> {
    const vars = this.pkg.manifest.variables ?? {};
    const defaults = (scope: 'conversation' | 'user' | 'bot') =>
      Object.fromEntries(Object.entries(vars[scope] ?? {}).map(([k, v]) => [k, v.default ?? null]));
    const keys = (['conversation', 'user', 'bot'] as const).map(
      (scope) => [scope, this.scopeKey(scope)] as const,
    );
    for (const [scope, key] of keys) {
      const current = key && found.get(stateKeyText(key));
      this.scopes[scope] = { ...defaults(scope), ...(current ?? {}) };
      if (key) this.stored[stateKeyText(key)] = this.json(this.scopes[scope]);
    }
    if (this.conversation) {
      const dialogKey = stateKeyText(this.dialogKey(this.conversation));
      const dialog = found.get(dialogKey);
      if (isDialogState(dialog)) {
        this.dialog = dialog;
        this.stored[dialogKey] = JSON.stringify(dialog);
      }
    }
    await this.syncWorkflowScope();
  }

  /** Stores the states the turn owns that changed since they were read or last stored, in one statement. */
  private async store(entries: StateEntry[], ending?: TurnResult): Promise<void> {
    const changed = entries
      .map((entry) => ({ ...entry, id: stateKeyText(entry.key), text: this.json(entry.payload) }))
      .filter((entry) => this.stored[entry.id] !== entry.text);
    const { states } = this.s.domain;
    if (ending) await states.writeAtTurnEnd(this.actor, changed, this.event.id, ending);
    else await states.write(this.actor, changed);
    for (const entry of changed) this.stored[entry.id] = entry.text;
  }

  private async storeWorkflowScope(): Promise<void> {
    const entry = await this.workflowScopeEntry();
    if (entry) await this.store([entry]);
  }

  /** The running workflow's variables to store, with its workflow record the first time they are stored. */
  private async workflowScopeEntry(): Promise<StateEntry | undefined> {
    const owner = this.workflowOwner;
    if (!owner) return undefined;
    const key: StateKey = { type: 'workflow', id: owner.id, name: VARIABLES_STATE };
    if (this.stored[stateKeyText(key)] === this.json(this.scopes.workflow)) return undefined;
    const recorded = this.dialog.recorded ?? [];
    if (!recorded.includes(owner.id)) {
      await this.s.domain.workflows.create(
        this.actor,
        {
          name: owner.workflow,
          status: 'in_progress',
          ...(this.conversation && { conversationId: this.conversation.id }),
          ...(this.user && { userId: this.user.id }),
          eventId: this.event.id,
        },
        owner.id,
      );
      this.dialog.recorded = [...recorded, owner.id];
    }
    return { key, payload: this.scopes.workflow };
  }

  /** The `workflow` scope follows the running workflow: a push or pop stores one and loads the other. */
  private async syncWorkflowScope(): Promise<void> {
    const top = this.dialog.frames[this.dialog.frames.length - 1];
    if (top?.recordId === this.workflowOwner?.id) return;
    await this.storeWorkflowScope();
    // A test of a draft shows the variables of the workflow that ran last, ended or not.
    if (this.workflowOwner)
      this.lastWorkflow = { name: this.workflowOwner.workflow, variables: this.scopes.workflow };
    this.workflowOwner = top && { id: top.recordId, workflow: top.workflow };
    if (!top) {
      this.scopes.workflow = {};
      return;
    }
    const declared = {
      ...(this.pkg.manifest.variables?.workflow ?? {}),
      ...(this.pkg.workflows[top.workflow]?.variables ?? {}),
    };
    const defaults = Object.fromEntries(Object.entries(declared).map(([k, v]) => [k, v.default ?? null]));
    const key: StateKey = { type: 'workflow', id: top.recordId, name: VARIABLES_STATE };
    // A run without a record has stored no variables: nothing to read.
    const current = (this.dialog.recorded ?? []).includes(top.recordId)
      ? (await this.s.domain.states.readMany(this.actor, [key])).get(stateKeyText(key))
      : undefined;
    this.scopes.workflow = { ...defaults, ...(current ?? {}) };
    this.stored[stateKeyText(key)] = this.json(this.scopes.workflow);
  }

  /** A state's JSON, written once per scope object (a turn compares and stores its scopes several times). */
  private json(payload: object): string {
    if (payload === this.dialog) return JSON.stringify(payload);
    let text = this.texts.get(payload);
    if (text === undefined) {
      text = JSON.stringify(payload);
      this.texts.set(payload, text);
    }
    return text;
  }

  private scopeKey(scope: VariableScope): StateKey | undefined {
    switch (scope) {
      case 'conversation':
        return this.conversation && { type: 'conversation', id: this.conversation.id, name: VARIABLES_STATE };
      case 'user':
        return this.user && { type: 'user', id: this.user.id, name: VARIABLES_STATE };
      case 'bot':
        return { type: 'bot', id: this.actor.botId, name: VARIABLES_STATE };
      case 'workflow':
        return this.workflowOwner && { type: 'workflow', id: this.workflowOwner.id, name: VARIABLES_STATE };
    }
  }

  private dialogKey(conversation: Conversation): StateKey {
    return { type: 'conversation', id: conversation.id, name: DIALOG_STATE };
  }

  private position(): { workflow: string; node: string } | null {
    const top = this.dialog.frames[this.dialog.frames.length - 1];
    return top ? { workflow: top.workflow, node: top.node } : null;
  }

  private logRefs() {
    return {
      ...(this.event.conversationId && { conversationId: this.event.conversationId }),
      ...(this.event.userId && { userId: this.event.userId }),
      ...(this.workflowOwner && { workflowId: this.workflowOwner.id }),
      eventId: this.event.id,
    };
  }
}

/** A readable name of a unit, for log lines: `hook before_incoming_message (01-filter.ts)`. */
export function unitName(unit: string): string {
  const [kind, ...rest] = unit.split(':');
  switch (kind) {
    case 'hook':
      return `hook ${rest[0]} (${rest.slice(1).join(':')})`;
    case 'action':
      return `action "${rest.join(':')}"`;
    case 'card':
      return `code card ${rest.length > 2 ? `${rest[2]} of node "${rest[1]}" in workflow "${rest[0]}"` : rest.join(':')}`;
    default:
      return `expression ${unit}`;
  }
}
