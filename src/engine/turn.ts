import type { BotActor } from '../domain/actors.ts';
import type { Conversation } from '../domain/conversations.ts';
import { ApiError } from '../domain/errors.ts';
import type { Event } from '../domain/events.ts';
import type { Domain } from '../domain/index.ts';
import type { Message } from '../domain/messages.ts';
import type { User } from '../domain/users.ts';
import { stateKeyText } from '../domain/states.ts';
import type { StateKey } from '../domain/states.ts';
import { newId } from '../domain/ids.ts';
import { DialogRunner } from './dialog.ts';
import type { DialogHost } from './dialog.ts';
import { DIALOG_STATE, emptyDialog, VARIABLES_STATE } from './dialog-state.ts';
import type { DialogState, Frame } from './dialog-state.ts';
import { buildEventObject, previewOf } from './event-object.ts';
import type { TriggerInfo } from './event-object.ts';
import type { RuntimeOperations } from './host.ts';
import { hostHandler } from './host.ts';
import type { LoadedBot } from './loaded-bot.ts';
import type { HookType, VariableScope, WorkflowNode } from './package/format.ts';
import type { CallContext, Json, JsonObject, Sandbox, Scopes } from './sandbox/types.ts';

/** A unit of bot code failed: the turn stops, the failure is logged to the bot's logs. */
export class UnitFailure extends Error {
  constructor(
    readonly unit: string,
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }

  /** The hosted product's error for the caller of an action: 504 for a time-out, 400 `Runtime` otherwise. */
  toApiError(): ApiError {
    if (this.kind === 'timeout') return new ApiError('OperationTimeout', this.message);
    return new ApiError('Runtime', this.message);
  }
}

/** The tag that makes each reply of a turn idempotent: a resumed turn finds the replies it already sent. */
const REPLY_TAG = 'parley:reply';

export type TurnResult = 'processed' | 'ignored';

/** Everything one turn needs from the engine. */
export interface TurnServices {
  domain: Domain;
  sandbox: Sandbox;
  operations: RuntimeOperations;
}

/**
 * One event's turn: the incoming hooks, the workflows, the outgoing hooks on each reply, then
 * `after_turn_end`. The dialog and the variables are stored after every card, so a turn that a crash
 * interrupted resumes where it stood, and the replies it had sent are not sent again.
 */
export class Turn implements DialogHost {
  readonly actor: BotActor;
  dialog: DialogState = emptyDialog();
  private scopes: Scopes = { workflow: {}, conversation: {}, user: {}, bot: {}, turn: {} };
  /** JSON of each scope as last stored, to store only what changed. */
  private stored: Record<string, string> = {};
  /** The workflow run whose variables `scopes.workflow` holds. */
  private workflowOwner: { id: string; workflow: string } | undefined;
  private eventObject: JsonObject = {};
  private message?: Message;
  private conversation?: Conversation;
  private user?: User;

  constructor(
    private readonly s: TurnServices,
    private readonly loaded: LoadedBot,
    private readonly event: Event,
  ) {
    this.actor = { botId: loaded.bot.botId, workspaceId: loaded.bot.workspaceId };
  }

  get pkg() {
    return this.loaded.pkg;
  }

  async execute(): Promise<TurnResult> {
    const { domain } = this.s;
    const isMessage = this.event.type === 'message_created' && this.event.messageId !== undefined;
    if (isMessage) {
      this.message = await domain.messages
        .get(this.actor, this.event.messageId as string)
        .catch(() => undefined);
      // The message was deleted before its turn: nothing to answer.
      if (!this.message) return 'ignored';
    }
    if (this.event.conversationId) {
      this.conversation = await domain.conversations
        .get(this.actor, this.event.conversationId)
        .catch(() => undefined);
      if (!this.conversation) return 'ignored';
    }
    if (this.event.userId)
      this.user = await domain.users.get(this.actor, this.event.userId).catch(() => undefined);

    await this.loadScopes();
    const resuming = this.dialog.turn?.eventId === this.event.id && this.dialog.turn.running;
    if (!resuming) this.dialog.turn = { eventId: this.event.id, replies: 0, running: true };
    const start = resuming ? undefined : this.startPoint(isMessage);
    // `event.trigger` is the trigger that started this turn's workflow, if one did (kept for a resumed turn).
    if (!resuming) this.dialog.trigger = start?.trigger;
    this.eventObject = buildEventObject({
      botId: this.actor.botId,
      event: this.event,
      ...(this.message && { message: this.message }),
      ...(this.conversation && { conversation: this.conversation }),
      ...(this.user && { user: this.user }),
      ...(this.dialog.trigger && { trigger: this.dialog.trigger }),
      dialog: this.position(),
    });

    if (!resuming) {
      const stopped = await this.incomingHooks(isMessage);
      if (stopped) {
        await this.finishTurn();
        return 'ignored';
      }
    }
    const runner = new DialogRunner(this);
    let handled = true;
    if (resuming) {
      await runner.run();
    } else if (isMessage && this.dialog.waiting && this.dialog.frames.length > 0) {
      if (await runner.answer(this.message as Message)) await runner.run();
    } else if (start) {
      await runner.start(start.workflow, start.node);
      await runner.run();
    } else {
      handled = false;
    }
    await this.finishTurn();
    return handled ? 'processed' : 'ignored';
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
        if (node)
          return { workflow, node: node.id, trigger: { flowId: workflow, nodeId: node.id } as TriggerInfo };
      }
      return undefined;
    };
    if (isMessage) {
      if (this.dialog.waiting && this.dialog.frames.length > 0) return undefined;
      if (!this.dialog.started) {
        const started = triggers('conversation_started');
        if (started) return started;
      }
      const received = triggers('message_received');
      if (received) return received;
      const main = this.pkg.workflows.main?.nodes.find((n) => n.type === 'start');
      return main ? { workflow: 'main', node: main.id } : undefined;
    }
    const custom = triggers(
      'custom_event',
      (n) => n.trigger?.kind === 'custom_event' && n.trigger.event === this.event.type,
    );
    if (custom)
      return { ...custom, trigger: { ...(custom.trigger as TriggerInfo), eventName: this.event.type } };
    const scheduled = /^schedule:([^:]+):(.+)$/.exec(this.event.type);
    if (scheduled)
      return {
        workflow: scheduled[1] as string,
        node: scheduled[2] as string,
        trigger: {
          flowId: scheduled[1] as string,
          nodeId: scheduled[2] as string,
          eventName: this.event.type,
        },
      };
    return undefined;
  }

  /** The incoming hooks; true when one stopped the message. */
  private async incomingHooks(isMessage: boolean): Promise<boolean> {
    const before: HookType = isMessage ? 'before_incoming_message' : 'before_incoming_event';
    // One hook at a time: a hook sees what the ones before it did, and a stop ends the turn at once.
    for (const unit of this.pkg.hooks[before] ?? []) {
      const result = (await this.run(unit)) as { stop?: unknown; payload?: unknown } | null;
      if (result && typeof result === 'object' && result.stop === true) return true;
      if (result && typeof result === 'object' && result.payload && typeof result.payload === 'object') {
        this.rewrite(result.payload as JsonObject);
      }
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

  private async finishTurn(): Promise<void> {
    await this.hooks('after_turn_end');
    if (this.dialog.turn) this.dialog.turn.running = false;
    await this.save();
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
    const host = hostHandler(this.s.operations, this.actor, (actor, type, input) =>
      this.callAction(type, input as JsonObject),
    );
    const outcome = await this.s.sandbox.call(this.loaded.program, unit, context, host);
    if (outcome.logs.length > 0) {
      await this.s.domain.botLogs.write(
        this.actor.botId,
        outcome.logs.map((line) => ({ ...line, timestamp: line.time, ...this.logRefs() })),
      );
    }
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
      const value = (await this.run(unit, { message: outgoing })) as {
        stop?: unknown;
        message?: unknown;
      } | null;
      if (value && typeof value === 'object' && value.stop === true) {
        outgoing = undefined;
        break;
      }
      if (value && typeof value === 'object' && value.message && typeof value.message === 'object') {
        outgoing = value.message as JsonObject;
      }
    }
    if (!outgoing) return;
    if (!this.conversation) {
      this.log('warn', 'A reply was dropped: this event has no conversation to reply in');
      return;
    }
    const { type, ...payload } = outgoing;
    const { message: sent } = await this.s.domain.messages.getOrCreate(this.actor, {
      conversationId: this.conversation.id,
      userId: this.actor.botId,
      type: typeof type === 'string' ? type : 'text',
      payload: payload as Record<string, unknown>,
      tags: { [REPLY_TAG]: `${this.event.id}:${n}` },
      discriminateByTags: [REPLY_TAG],
    });
    await this.hooks('after_outgoing_message', { message: JSON.parse(JSON.stringify(sent)) as Json });
  }

  async save(): Promise<void> {
    await this.syncWorkflowScope();
    for (const scope of ['conversation', 'user', 'bot'] as const) {
      const key = this.scopeKey(scope);
      if (key) await this.store(key, this.scopes[scope]);
    }
    await this.storeWorkflowScope();
    if (this.conversation) await this.store(this.dialogKey(), this.dialog as unknown as JsonObject);
  }

  /** Names a workflow run; its record is stored only when its variables are (see `storeWorkflowScope`). */
  async startWorkflow(): Promise<string> {
    return newId('workflow');
  }

  async finishWorkflow(frame: Frame, status: 'completed' | 'cancelled'): Promise<void> {
    const recorded = this.dialog.recorded ?? [];
    if (!recorded.includes(frame.recordId)) return;
    this.dialog.recorded = recorded.filter((id) => id !== frame.recordId);
    await this.s.domain.workflows.update(this.actor, frame.recordId, { status }).catch(() => undefined);
  }

  async setVariable(ref: string, value: Json): Promise<void> {
    // The workflow scope must be the running workflow's before it is written.
    await this.syncWorkflowScope();
    const [scope, name] = ref.split('.') as [VariableScope, string];
    this.scopes[scope] = { ...this.scopes[scope], [name]: value };
  }

  async callAction(type: string, input: JsonObject): Promise<Json> {
    const result = await this.s.domain.actions.call(this.actor, type, input, this);
    return result.output as Json;
  }

  async endConversation(): Promise<void> {
    await this.hooks('after_conversation_end');
  }

  log(level: 'info' | 'warn' | 'error', message: string): void {
    void this.s.domain.botLogs
      .write(this.actor.botId, [{ level, message, ...this.logRefs() }])
      .catch(() => undefined);
  }

  // Variables

  /** The turn's variables and dialog, in one read. */
  private async loadScopes(): Promise<void> {
    const vars = this.pkg.manifest.variables ?? {};
    const defaults = (scope: 'conversation' | 'user' | 'bot') =>
      Object.fromEntries(Object.entries(vars[scope] ?? {}).map(([k, v]) => [k, (v.default ?? null) as Json]));
    const keys = (['conversation', 'user', 'bot'] as const).map(
      (scope) => [scope, this.scopeKey(scope)] as const,
    );
    const wanted = [
      ...keys.flatMap(([, key]) => (key ? [key] : [])),
      ...(this.conversation ? [this.dialogKey()] : []),
    ];
    const found = await this.s.domain.states.readMany(this.actor, wanted);
    for (const [scope, key] of keys) {
      const current = key && (found.get(stateKeyText(key)) as JsonObject | undefined);
      this.scopes[scope] = { ...defaults(scope), ...(current ?? {}) };
      if (key) this.stored[stateKeyText(key)] = JSON.stringify(this.scopes[scope]);
    }
    if (this.conversation) {
      const dialog = found.get(stateKeyText(this.dialogKey()));
      if (dialog) {
        this.dialog = dialog as unknown as DialogState;
        this.stored[stateKeyText(this.dialogKey())] = JSON.stringify(dialog);
      }
    }
    await this.syncWorkflowScope();
  }

  /** Stores a state the turn owns, when it changed since it was read or last stored. */
  private async store(key: StateKey, payload: JsonObject): Promise<void> {
    const text = JSON.stringify(payload);
    const id = stateKeyText(key);
    if (this.stored[id] === text) return;
    await this.s.domain.states.write(this.actor, key, payload);
    this.stored[id] = text;
  }

  /** The running workflow's variables, with its workflow record the first time they are stored. */
  private async storeWorkflowScope(): Promise<void> {
    const owner = this.workflowOwner;
    if (!owner) return;
    const key: StateKey = { type: 'workflow', id: owner.id, name: VARIABLES_STATE };
    if (this.stored[stateKeyText(key)] === JSON.stringify(this.scopes.workflow)) return;
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
        undefined,
        owner.id,
      );
      this.dialog.recorded = [...recorded, owner.id];
    }
    await this.store(key, this.scopes.workflow);
  }

  /** The `workflow` scope follows the running workflow: a push or pop stores one and loads the other. */
  private async syncWorkflowScope(): Promise<void> {
    const top = this.dialog.frames[this.dialog.frames.length - 1];
    if (top?.recordId === this.workflowOwner?.id) return;
    await this.storeWorkflowScope();
    this.workflowOwner = top && { id: top.recordId, workflow: top.workflow };
    if (!top) {
      this.scopes.workflow = {};
      return;
    }
    const declared = {
      ...(this.pkg.manifest.variables?.workflow ?? {}),
      ...(this.pkg.workflows[top.workflow]?.variables ?? {}),
    };
    const defaults = Object.fromEntries(
      Object.entries(declared).map(([k, v]) => [k, (v.default ?? null) as Json]),
    );
    const key: StateKey = { type: 'workflow', id: top.recordId, name: VARIABLES_STATE };
    // A run without a record has stored no variables: nothing to read.
    const current = (this.dialog.recorded ?? []).includes(top.recordId)
      ? (await this.s.domain.states.readMany(this.actor, [key])).get(stateKeyText(key))
      : undefined;
    this.scopes.workflow = { ...defaults, ...((current as JsonObject | undefined) ?? {}) };
    this.stored[stateKeyText(key)] = JSON.stringify(this.scopes.workflow);
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

  private dialogKey(): StateKey {
    return { type: 'conversation', id: (this.conversation as Conversation).id, name: DIALOG_STATE };
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
