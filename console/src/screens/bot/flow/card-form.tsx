// A card's form, generated from the package format's JSON Schema of its type (CARD_SCHEMA, the one the
// server validates with): a field per property, by its schema: text, number, a checkbox, a choice among an
// enum's values, a list of lines for an array of strings, rows of sub-forms for an array of objects, a
// group for an object; code (a string whose contentMediaType is CODE_MEDIA_TYPE) in the code editor;
// anything else (a message, a template: any JSON) is a text area holding text or JSON. Each change is
// the card's at once: the Flow tab validates the draft as it changes.
import { CARD_SCHEMA, CODE_MEDIA_TYPE } from '../../../../../src/contract/admin/bot-drafts.ts';
import type { FlowCard } from '../../../api/types.ts';
import { CodeField } from './code-field.tsx';

/** The parts of a JSON Schema the form reads. */
interface Schema {
  type?: string;
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  description?: string;
  contentMediaType?: string;
}

/** A card's fields as the form holds them: the server checks them against the schema. */
type JsonObject = Record<string, unknown>;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON Schema's parts the form reads, read from any value (the TypeBox schema is plain JSON). */
function schemaOf(value: unknown): Schema {
  if (!isObject(value)) return {};
  const properties = isObject(value.properties)
    ? Object.fromEntries(Object.entries(value.properties).map(([k, v]) => [k, schemaOf(v)]))
    : undefined;
  return {
    ...(typeof value.type === 'string' && { type: value.type }),
    ...(Array.isArray(value.enum) && { enum: value.enum }),
    ...('const' in value && { const: value.const }),
    ...(properties && { properties }),
    ...(Array.isArray(value.required) && { required: value.required.map(String) }),
    ...('items' in value && { items: schemaOf(value.items) }),
    ...(typeof value.description === 'string' && { description: value.description }),
    ...(typeof value.contentMediaType === 'string' && { contentMediaType: value.contentMediaType }),
  };
}

const BRANCHES: { type: string; schema: Schema }[] = (
  Array.isArray(CARD_SCHEMA.anyOf) ? CARD_SCHEMA.anyOf : []
).flatMap((branch: unknown) => {
  const schema = schemaOf(branch);
  const type = schema.properties?.type?.const;
  return typeof type === 'string' ? [{ type, schema }] : [];
});

/** The card types, in the format's order. */
export const CARD_TYPES = BRANCHES.map((b) => b.type);

export const cardSchema = (type: string): Schema | undefined => BRANCHES.find((b) => b.type === type)?.schema;

/** What a new card of `type` starts as: its type, and the defaults that make a useful start. */
export function newCard(type: string): FlowCard {
  const start: Record<string, unknown> = { type };
  if (type === 'say') start.message = { type: 'text', text: '' };
  if (type === 'capture') start.kind = 'choice';
  // The card's type is one of the schema's: the server checks the rest as the author fills it in.
  return start as FlowCard;
}

/** A text area's value: text as it is, anything else as JSON. */
const asText = (value: unknown) =>
  value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value, null, 2);

/** What a text area holds: JSON when it parses as an object or list, else the text. */
function fromText(text: string): unknown {
  if (text === '') return undefined;
  if (/^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // Not JSON yet (being typed): kept as text, which the server's problems explain.
    }
  }
  return text;
}

function FieldInput(props: {
  id: string;
  name: string;
  schema: Schema;
  value: unknown;
  onChange: (value: unknown) => void;
}) {
  const { id, schema, value, onChange } = props;
  if (schema.enum) {
    return (
      <select
        id={id}
        value={typeof value === 'string' ? value : ''}
        onChange={(e) => onChange(e.currentTarget.value || undefined)}
      >
        <option value="">—</option>
        {schema.enum.map((v) => (
          <option key={String(v)} value={String(v)}>
            {String(v)}
          </option>
        ))}
      </select>
    );
  }
  switch (schema.type) {
    case 'string':
      if (schema.contentMediaType === CODE_MEDIA_TYPE)
        return (
          <CodeField
            id={id}
            label={props.name}
            value={typeof value === 'string' ? value : ''}
            onChange={onChange}
          />
        );
      return (
        <input
          id={id}
          type="text"
          value={typeof value === 'string' ? value : ''}
          onInput={(e) => onChange(e.currentTarget.value === '' ? undefined : e.currentTarget.value)}
        />
      );
    case 'integer':
    case 'number':
      return (
        <input
          id={id}
          type="number"
          value={typeof value === 'number' ? String(value) : ''}
          onInput={(e) => {
            const text = e.currentTarget.value;
            onChange(text === '' ? undefined : Number(text));
          }}
        />
      );
    case 'boolean':
      return (
        <input
          id={id}
          type="checkbox"
          checked={value === true}
          onChange={(e) => onChange(e.currentTarget.checked ? true : undefined)}
        />
      );
    case 'array':
      if (schema.items?.type === 'string')
        return (
          <textarea
            id={id}
            rows={3}
            value={Array.isArray(value) ? value.map(String).join('\n') : ''}
            onInput={(e) => {
              const lines = e.currentTarget.value.split('\n').filter((l) => l !== '');
              onChange(lines.length ? lines : undefined);
            }}
          />
        );
      if (schema.items?.type === 'object' && schema.items.properties)
        return <Rows id={id} schema={schema.items} value={value} onChange={onChange} />;
      break;
    case 'object':
      if (schema.properties)
        return (
          <Fields
            id={id}
            schema={schema}
            value={isObject(value) ? value : {}}
            onChange={(v) => onChange(Object.keys(v).length ? v : undefined)}
          />
        );
      break;
  }
  return (
    <textarea
      id={id}
      rows={3}
      class="json-input"
      value={asText(value)}
      onInput={(e) => onChange(fromText(e.currentTarget.value))}
    />
  );
}

/** An array of objects: a sub-form per item, each removable, and a button that adds one. */
function Rows(props: { id: string; schema: Schema; value: unknown; onChange: (value: unknown) => void }) {
  const rows: unknown[] = Array.isArray(props.value) ? props.value : [];
  const set = (next: unknown[]) => props.onChange(next.length ? next : undefined);
  return (
    <div class="card-rows" id={props.id}>
      {rows.map((row, i) => (
        <div class="card-row" key={i}>
          <Fields
            id={`${props.id}-${i}`}
            schema={props.schema}
            value={isObject(row) ? row : {}}
            onChange={(v) => set(rows.map((r, j) => (j === i ? v : r)))}
          />
          <button type="button" class="small secondary" onClick={() => set(rows.filter((_, j) => j !== i))}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" class="small secondary" onClick={() => set([...rows, {}])}>
        Add
      </button>
    </div>
  );
}

/** An object's properties, each a labelled field (required ones marked). */
export function Fields(props: {
  id: string;
  schema: Schema;
  value: JsonObject;
  onChange: (value: JsonObject) => void;
  problems?: (key: string) => string[];
}) {
  const { id, schema, value, onChange } = props;
  const required = new Set(schema.required ?? []);
  return (
    <div class="card-fields">
      {Object.entries(schema.properties ?? {}).map(([key, field]) => {
        if (field.const !== undefined || key === 'id') return null;
        const fieldId = `${id}-${key}`;
        const problems = props.problems?.(key) ?? [];
        return (
          <div class={`field${problems.length ? ' field-problem' : ''}`} key={key}>
            <label for={fieldId}>
              {key}
              {required.has(key) && <span aria-hidden="true"> *</span>}
            </label>
            <FieldInput
              id={fieldId}
              name={key}
              schema={field}
              value={value[key]}
              onChange={(v) => {
                const { [key]: _, ...rest } = value;
                onChange(v === undefined ? rest : { ...rest, [key]: v });
              }}
            />
            {field.description && <small class="muted">{field.description}</small>}
            {problems.map((message) => (
              <small class="problem" role="alert" key={message}>
                {key}: {message}
              </small>
            ))}
          </div>
        );
      })}
    </div>
  );
}
