// A message as a person sees it: text, choices, cards, carousels, images, media, files and locations.
// Everything comes from a bot's or a user's payload: it is rendered as text, and links only to http(s).

type Fields = Record<string, unknown>;

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

function Card({ card }: { card: Fields }) {
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
                  <span class="chip" title={`${str(action.action) ?? ''}: ${str(action.value) ?? ''}`}>
                    {str(action.label)}
                  </span>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}

function Options({ text, options, kind }: { text: string | undefined; options: Fields[]; kind: string }) {
  return (
    <div>
      {text && <p class="text">{text}</p>}
      <ul class="choices" aria-label={kind}>
        {options.map((o, i) => (
          <li key={i}>
            <span class="chip" title={str(o.value)}>
              {str(o.label)}
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** `type` is the message's type; `payload` its content (with or without a `type` of its own). */
export function Payload({ type, payload }: { type: string; payload: Fields }) {
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
      return <Card card={payload} />;
    case 'carousel':
      return (
        <div class="carousel">
          {list(payload.items).map((card, i) => (
            <Card key={i} card={card} />
          ))}
        </div>
      );
    case 'choice':
    case 'dropdown':
      return <Options text={str(payload.text)} options={list(payload.options)} kind={type} />;
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
