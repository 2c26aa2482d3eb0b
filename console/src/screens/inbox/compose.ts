// What the agent's composer sends: its fields made into Chat API payloads, in the order the visitor
// reads them (the words, or the question with its choices; then the link).
import type { HandoffPayload } from '../../api/handoffs.ts';

export interface Draft {
  text: string;
  /** One choice a line; a choice's value is its label, as a visitor who typed it would send. */
  choices: string;
  /** An image's or a file's address. */
  link: string;
}

export const EMPTY_DRAFT: Draft = { text: '', choices: '', link: '' };

const IMAGE = /\.(png|jpe?g|gif|webp|svg|avif)$/i;

/** The payloads of a draft, or why it cannot be sent. */
export function payloadsOf(draft: Draft): HandoffPayload[] | { problem: string } {
  const text = draft.text.trim();
  const options = draft.choices
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((label) => ({ label, value: label }));
  const link = draft.link.trim();
  const payloads: HandoffPayload[] = [];
  if (options.length > 0) {
    if (!text) return { problem: 'Write the question the choices answer' };
    payloads.push({ type: 'choice', text, options });
  } else if (text) {
    payloads.push({ type: 'text', text });
  }
  if (link) {
    let url: URL;
    try {
      url = new URL(link);
    } catch {
      return { problem: 'The link is not a web address (https://…)' };
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      return { problem: 'The link is not a web address (https://…)' };
    const name = decodeURIComponent(url.pathname.split('/').pop() ?? '');
    payloads.push(
      IMAGE.test(url.pathname)
        ? { type: 'image', imageUrl: url.href }
        : { type: 'file', fileUrl: url.href, ...(name && { title: name }) },
    );
  }
  if (payloads.length === 0) return { problem: 'Write a message, or give a link' };
  return payloads;
}
