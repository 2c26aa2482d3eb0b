// A message as a person sees it: text, choices, cards, carousels, images, media, files and locations.
// Everything comes from a bot's or a user's payload: it is rendered as text, and links only to http(s).

type Fields = Record<string, unknown>;

/** Answers a choice of the bot's message with its value (the chips are buttons only when it is given). */
export type OnChoose = (value: string) => void;

/** A chip: a button that sends `value` when there is somewhere to send it, else its label. */
function Chip({ label, value, onChoose }: { label: string; value: string; onChoose?: OnChoose | undefined }) {
  if (!onChoose || value === '') {
    return (
      <span class="chip" title={value}>
        {label}
      </span>
    );
  }
  return (
    <button type="button" class="chip" title={value} onClick={() => onChoose(value)}>
      {label}
    </button>
  );
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const list = (value: unknown): Fields[] =>
  Array.isArray(value) ? value.filter((v): v is Fields => typeof v === 'object' && v !== null) : [];

/** Only web addresses become links and sources (no `javascript:` or other schemes). */
export function safeUrl(value: unknown): string | undefined {
  const text = str(value);
  if (!text) return undefined;
  try {
    const url = new URL(text, window.location.href);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function Card({ card, onChoose }: { card: Fields; onChoose?: OnChoose | undefined }) {
  const image = safeUrl(card.imageUrl);
  return (
    <div class="card-payload">
      {image && <img src={image} alt="" loading="lazy" />}
      <strong>{str(card.title)}</strong>
      {str(card.subtitle) && <span class="muted">{str(card.subtitle)}</span>}
      {list(card.actions).length > 0 && (
        <ul class="choices">
          {list(card.actions).map((action, i) => {
            const url = action.action === 'url' ? safeUrl(action.value) : undefined;
            return (
              <li key={i}>
                {url ? (
                  <a href={url} target="_blank" rel="noopener noreferrer">
                    {str(action.label)}
                  </a>
                ) : (
                  // A postback or a say sends its value, as the webchat does.
                  <Chip label={str(action.label) ?? ''} value={str(action.value) ?? ''} onChoose={onChoose} />
                )}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}

function Options({
  text,
  options,
  kind,
  onChoose,
}: {
  text: string | undefined;
  options: Fields[];
  kind: string;
  onChoose?: OnChoose | undefined;
}) {
  return (
    <div>
      {text && <p class="text">{text}</p>}
      <ul class="choices" aria-label={kind}>
        {options.map((o, i) => (
          <li key={i}>
            <Chip label={str(o.label) ?? ''} value={str(o.value) ?? ''} onChoose={onChoose} />
          </li>
        ))}
      </ul>
    </div>
  );
}

/** At most this many characters of a message in one line of a list. */
const LINE_MAX = 80;

/** A message in one line of text, as a list shows it: its words, or what kind of message it is. */
export function oneLine(type: string, payload: Fields): string {
  const words =
    type === 'markdown'
      ? str(payload.markdown)
      : type === 'card' || type === 'file'
        ? str(payload.title)
        : str(payload.text);
  const line = (words ?? '').replace(/\s+/g, ' ').trim() || `[${type}]`;
  return line.length <= LINE_MAX ? line : `${line.slice(0, LINE_MAX - 1)}…`;
}

/**
 * `type` is the message's type; `payload` its content (with or without a `type` of its own);
 * `onChoose`, where the message can be answered, makes its choices buttons.
 */
export function Payload({
  type,
  payload,
  onChoose,
}: {
  type: string;
  payload: Fields;
  onChoose?: OnChoose | undefined;
}) {
  switch (type) {
    case 'text':
      return <p class="text">{str(payload.text)}</p>;
    case 'markdown':
      return <p class="text">{str(payload.markdown)}</p>;
    case 'image': {
      const src = safeUrl(payload.imageUrl);
      return src ? <img class="media" src={src} alt="image" loading="lazy" /> : <p class="muted">image</p>;
    }
    case 'audio': {
      const src = safeUrl(payload.audioUrl);
      return src ? <audio class="media" controls src={src} /> : <p class="muted">audio</p>;
    }
    case 'video': {
      const src = safeUrl(payload.videoUrl);
      return src ? <video class="media" controls src={src} /> : <p class="muted">video</p>;
    }
    case 'file': {
      const href = safeUrl(payload.fileUrl);
      const title = str(payload.title) ?? 'file';
      return href ? (
        <a href={href} target="_blank" rel="noopener noreferrer">
          📄 {title}
        </a>
      ) : (
        <p>📄 {title}</p>
      );
    }
    case 'location': {
      const place = [str(payload.title), str(payload.address)].filter(Boolean).join(', ');
      return (
        <p>
          📍 {place || 'Location'} ({String(payload.latitude)}, {String(payload.longitude)})
        </p>
      );
    }
    case 'card':
      return <Card card={payload} onChoose={onChoose} />;
    case 'carousel':
      return (
        <div class="carousel">
          {list(payload.items).map((card, i) => (
            <Card key={i} card={card} onChoose={onChoose} />
          ))}
        </div>
      );
    case 'choice':
    case 'dropdown':
      return (
        <Options text={str(payload.text)} options={list(payload.options)} kind={type} onChoose={onChoose} />
      );
    case 'bloc':
      return (
        <div class="bloc">
          {list(payload.items).map((item, i) => {
            const inner =
              typeof item.payload === 'object' && item.payload !== null ? (item.payload as Fields) : item;
            return <Payload key={i} type={str(item.type) ?? 'unknown'} payload={inner} />;
          })}
        </div>
      );
    default:
      return (
        <pre class="json" aria-label={`${type} payload`}>
          {JSON.stringify(payload, null, 2)}
        </pre>
      );
  }
}
