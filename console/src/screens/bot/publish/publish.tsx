// Putting a bot on a website: its share link, the snippet a website pastes, the origins allowed to embed
// it, its look (with a live preview of the official webchat) and what a visitor reads when a turn fails.
// Everything here is the chat channel's configuration, sent back whole on each save.
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  embedSnippet,
  isPreviewReady,
  PREVIEW_PARAM,
  SHARE_PATH,
} from '../../../../../src/contract/webchat/pages.ts';
import type { PreviewLookMessage } from '../../../../../src/contract/webchat/pages.ts';
import { FALLBACK_TEXT_MAX } from '../../../../../src/domain/chat/fallback-message.ts';
import { admin } from '../../../api/admin.ts';
import { useAction } from '../../../hooks.ts';
import { can } from '../../../roles.ts';
import { useCurrentSession } from '../../../session.tsx';
import { CopyValue, Field, InlineError, valueOf } from '../../../ui/components.tsx';
import type { BotScreenProps } from '../screen-props.ts';
import { appearanceValues, readChatSettings, withChanges } from './chat-settings.ts';
import type { Appearance, ChatSettings } from './chat-settings.ts';
import { sameSite } from './sites.ts';

type Changes = Parameters<typeof withChanges>[1];

/** The docs' section on visitors kept across page loads, named where the console cannot link to it. */
const CROSS_SITE_DOCS = 'docs/publishing.md, “Visitors remembered across page loads”';

interface SectionProps extends BotScreenProps {
  settings: ChatSettings;
  mayWrite: boolean;
}

/** Saves a change of the chat channel's configuration (the rest of it kept), each section its own. */
function useChatSave({ bot, setBot }: BotScreenProps) {
  return useAction(async (changes: Changes) => {
    const chat = bot.integrations.chat;
    if (!chat) return;
    const configuration = withChanges(chat.configuration, changes);
    const { bot: updated } = await admin.updateBot(bot.id, { integrations: { chat: { configuration } } });
    setBot(() => ({ bot: updated }));
  });
}

function ShareAndEmbed({ shareUrl, snippet }: { shareUrl: string; snippet: string }) {
  return (
    <section class="panel" aria-labelledby="share-title">
      <h2 id="share-title">Share link</h2>
      <p class="muted">A full-page chat with the bot, to send to people.</p>
      <div class="actions">
        <CopyValue value={shareUrl} label="share link" />
        <a href={shareUrl} target="_blank" rel="noopener noreferrer" class="link-button">
          Open in a new tab
        </a>
      </div>
      <h2 id="embed-title" class="spaced">
        On your website
      </h2>
      <p class="muted">
        Paste this before <code>&lt;/body&gt;</code> on the pages that should show the chat: a bubble in the
        corner opens it.
      </p>
      <div class="snippet">
        <CopyValue value={snippet} label="embed snippet" />
      </div>
    </section>
  );
}

/** Sends the unsaved look to the preview frame, now and whenever it says it is ready (after each load). */
function usePreview(frame: { current: HTMLIFrameElement | null }, look: Partial<Appearance>) {
  const lookRef = useRef(look);
  lookRef.current = look;
  const send = () => {
    const message: PreviewLookMessage = { source: 'parley-console', type: 'look', look: lookRef.current };
    frame.current?.contentWindow?.postMessage(message, window.location.origin);
  };
  useEffect(() => {
    const onMessage = (event: MessageEvent) => {
      if (event.source === frame.current?.contentWindow && isPreviewReady(event.data)) send();
    };
    window.addEventListener('message', onMessage);
    return () => window.removeEventListener('message', onMessage);
  }, []);
  useEffect(send, [look.botName, look.color, look.botAvatar, look.botDescription]);
}

function AppearanceSection(props: SectionProps & { shareUrl: string }) {
  const { settings, mayWrite, shareUrl } = props;
  const botName = props.bot.name;
  const save = useChatSave(props);
  const [look, setLook] = useState<Appearance>(settings.appearance);
  const [saved, setSaved] = useState(false);
  const frame = useRef<HTMLIFrameElement>(null);
  usePreview(frame, appearanceValues(look));
  const change = (patch: Partial<Appearance>) => {
    setSaved(false);
    setLook({ ...look, ...patch });
  };
  const colour = /^#[0-9a-fA-F]{6}$/.test(look.color) ? look.color : '#3276ea';
  return (
    <section class="panel" aria-labelledby="look-title">
      <h2 id="look-title">Appearance</h2>
      <div class="publish-look">
        <form
          class="stack"
          onSubmit={(e) => {
            e.preventDefault();
            void save.run({ appearance: look }).then(setSaved);
          }}
        >
          <Field label="Name" hint={`Empty: the bot's name (${botName}).`}>
            <input
              value={look.botName}
              placeholder={botName}
              maxLength={100}
              readOnly={!mayWrite}
              onInput={(e) => change({ botName: valueOf(e) })}
            />
          </Field>
          <Field label="Colour" hint="Of the header, the bubble and the visitor's messages.">
            <span class="colour-field">
              <input
                type="color"
                aria-label="Colour picker"
                value={colour}
                disabled={!mayWrite}
                onInput={(e) => change({ color: valueOf(e) })}
              />
              <input
                aria-label="Colour"
                value={look.color}
                placeholder="#3276EA"
                pattern="#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})"
                readOnly={!mayWrite}
                onInput={(e) => change({ color: valueOf(e) })}
              />
            </span>
          </Field>
          <Field label="Avatar URL" hint="An https:// picture of the bot.">
            <input
              type="url"
              value={look.botAvatar}
              placeholder="https://…/avatar.png"
              readOnly={!mayWrite}
              onInput={(e) => change({ botAvatar: valueOf(e) })}
            />
          </Field>
          <Field label="Greeting" hint="Under the name, at the top of a new chat.">
            <textarea
              rows={2}
              maxLength={500}
              value={look.botDescription}
              readOnly={!mayWrite}
              onInput={(e) => change({ botDescription: valueOf(e) })}
            />
          </Field>
          {mayWrite && (
            <div class="actions">
              <button type="submit" disabled={save.busy}>
                Save appearance
              </button>
              {saved && <span role="status">Saved: the share page and the embed show it now.</span>}
            </div>
          )}
          <InlineError error={save.error} />
        </form>
        <figure class="preview">
          <iframe
            ref={frame}
            title="Preview of the webchat"
            src={`${shareUrl}?${PREVIEW_PARAM}`}
            // The console sends no referrer; this frame gives its origin (the page's own), so that a
            // list of origins without it gets the server's notice in the frame, not an empty one.
            referrerpolicy="origin"
            allow="clipboard-write"
          />
          <figcaption class="muted">
            Live preview, with the values above before they are saved. It is a real chat with the bot.
          </figcaption>
        </figure>
      </div>
    </section>
  );
}

/** The origins that would be refused the chat: those the list leaves out of the console's own. */
function excludedOwn(origins: string[]): string | undefined {
  const own = window.location.origin;
  return origins.includes('*') || origins.includes(own) ? undefined : own;
}

function OriginsSection(props: SectionProps) {
  const { settings, mayWrite } = props;
  const save = useChatSave(props);
  const busy = save.busy;
  const [restricted, setRestricted] = useState(settings.allowedOrigins !== undefined);
  const [origins, setOrigins] = useState<string[]>(settings.allowedOrigins ?? []);
  const [warning, setWarning] = useState<string | undefined>(undefined);
  const [saved, setSaved] = useState(false);
  const listed = origins.map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean);
  const submit = async (list: string[] | null) => {
    setWarning(undefined);
    setSaved(await save.run({ allowedOrigins: list }));
  };
  const edit = (next: string[]) => {
    setSaved(false);
    setWarning(undefined);
    setOrigins(next);
  };
  const otherSites = (settings.allowedOrigins ?? []).filter(
    (o) => o !== '*' && !sameSite(o, window.location.origin),
  );
  return (
    <section class="panel" aria-labelledby="origins-title">
      <h2 id="origins-title">Allowed origins</h2>
      <p class="muted">
        The websites whose pages may embed the chat and call the bot's Chat API from a browser: a scheme and a
        host, such as <code>https://shop.example.com</code>. A page of any other origin shows a notice in
        place of the chat.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!restricted) return void submit(null);
          const own = excludedOwn(listed);
          if (own && warning === undefined) return setWarning(own);
          void submit(listed);
        }}
      >
        <fieldset class="origin-mode" disabled={!mayWrite}>
          <legend class="visually-hidden">Who may embed the chat</legend>
          <label>
            <input
              type="radio"
              name="origins"
              checked={!restricted}
              onChange={() => (setRestricted(false), setWarning(undefined), setSaved(false))}
            />{' '}
            Any website
          </label>
          <label>
            <input
              type="radio"
              name="origins"
              checked={restricted}
              onChange={() => (setRestricted(true), setSaved(false))}
            />{' '}
            Only these origins
          </label>
        </fieldset>
        {restricted && (
          <ul class="plain origin-list">
            {origins.map((origin, i) => (
              <li key={i}>
                <input
                  aria-label={`Origin ${i + 1}`}
                  value={origin}
                  placeholder="https://shop.example.com"
                  readOnly={!mayWrite}
                  onInput={(e) => edit(origins.map((o, j) => (j === i ? valueOf(e) : o)))}
                />{' '}
                {mayWrite && (
                  <button
                    type="button"
                    class="secondary small"
                    onClick={() => edit(origins.filter((_, j) => j !== i))}
                  >
                    Remove
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
        {warning !== undefined && (
          <div class="notice" role="alert">
            <p>
              <strong>This list leaves out {warning}</strong>, where this console and the share page are. Once
              saved, the preview here shows a notice instead of the chat, and so does any page whose origin is
              not listed: check that your own website is in the list.
            </p>
            <div class="actions">
              <button type="button" disabled={busy} onClick={() => void submit([...listed, warning])}>
                Add {warning} and save
              </button>
              <button type="button" class="secondary" disabled={busy} onClick={() => void submit(listed)}>
                Save without it
              </button>
            </div>
          </div>
        )}
        {mayWrite && (
          <div class="actions">
            {restricted && (
              <button type="button" class="secondary" onClick={() => edit([...origins, ''])}>
                Add origin
              </button>
            )}
            <button type="submit" disabled={busy}>
              Save origins
            </button>
            {saved && <span role="status">Saved.</span>}
          </div>
        )}
        <InlineError error={save.error} />
      </form>
      <div class="notice cross-site" role="note">
        <p>
          {otherSites.length > 0 ? (
            <>
              <strong>{otherSites.join(', ')}</strong> {otherSites.length === 1 ? 'is' : 'are'} on another
              site than this server ({window.location.host}):
            </>
          ) : (
            <>When the website is on another site than this server ({window.location.host}),</>
          )}{' '}
          browsers that block storage in frames of other sites (Safari, Firefox, Chrome without third-party
          cookies) forget the visitor at every page load: each load starts a new conversation. To keep
          visitors, serve Parley on a subdomain of the website (<code>chat.</code> your domain) so that the
          chat is first-party. See {CROSS_SITE_DOCS}.
        </p>
      </div>
    </section>
  );
}

function FallbackSection(props: SectionProps) {
  const { settings, mayWrite } = props;
  const save = useChatSave(props);
  const [enabled, setEnabled] = useState(settings.fallback.enabled);
  const [text, setText] = useState(settings.fallback.text);
  const [saved, setSaved] = useState(false);
  return (
    <section class="panel" aria-labelledby="fallback-title">
      <h2 id="fallback-title">When a turn fails</h2>
      <p class="muted">
        When the bot's code throws, or its turn is given up after its retries, the visitor reads this message
        instead of silence. The error itself stays in the bot's logs.
      </p>
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          void save.run({ fallback: { enabled, text } }).then(setSaved);
        }}
      >
        <label>
          <input
            type="checkbox"
            checked={enabled}
            disabled={!mayWrite}
            onChange={(e) => (setEnabled(e.currentTarget.checked), setSaved(false))}
          />{' '}
          Send a message to the visitor when a turn fails
        </label>
        <Field label="Message">
          <textarea
            rows={2}
            required
            maxLength={FALLBACK_TEXT_MAX}
            value={text}
            readOnly={!mayWrite}
            disabled={!enabled}
            onInput={(e) => (setText(valueOf(e)), setSaved(false))}
          />
        </Field>
        {mayWrite && (
          <div class="actions">
            <button type="submit" disabled={save.busy}>
              Save
            </button>
            {saved && <span role="status">Saved.</span>}
          </div>
        )}
        <InlineError error={save.error} />
      </form>
    </section>
  );
}

export function Publish(props: BotScreenProps) {
  const session = useCurrentSession();
  const mayWrite = can(session.role, 'bots.write');
  const chat = props.bot.integrations.chat;
  if (!chat?.webchatShareUrl || !chat.webchatClientId) {
    return <p class="muted">This bot has no chat channel: there is nothing to publish.</p>;
  }
  const shareUrl = chat.webchatShareUrl;
  const base = shareUrl.slice(0, shareUrl.lastIndexOf(SHARE_PATH));
  const sections: SectionProps = { ...props, settings: readChatSettings(chat.configuration), mayWrite };
  return (
    <>
      {!mayWrite && (
        <p class="notice" role="note">
          Read only: your role ({session.role}) may not change bots.
        </p>
      )}
      {!chat.enabled && (
        <p class="notice" role="note">
          The chat channel is off (Settings): the share page and the embedded chat do not answer until it is
          on.
        </p>
      )}
      <ShareAndEmbed shareUrl={shareUrl} snippet={embedSnippet(base, chat.webchatClientId)} />
      <AppearanceSection {...sections} shareUrl={shareUrl} />
      <OriginsSection {...sections} />
      <FallbackSection {...sections} />
    </>
  );
}
