// The fenced blocks of the documentation, read with the Markdown parser the server already uses (marked),
// and what the HTML comment just before each says about it. test/docs.test.ts runs them; other tests read
// the blocks they run by their marker (`docsBlock`).
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { lexer } from 'marked';
import type { Token } from 'marked';

/** A fenced block of a document. */
export interface DocBlock {
  /** The document's path from the repository's root. */
  doc: string;
  /** The line of its opening fence (1-based). */
  line: number;
  lang: string;
  text: string;
  /** The HTML comment just before the fence, without `<!--` and `-->`. */
  marker?: string;
}

/** The documents whose snippets are run: the README, docs/ and the examples' READMEs. */
export async function documents(): Promise<string[]> {
  const docs = (await readdir('docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  const examples = await readdir('examples', { withFileTypes: true });
  const readmes = examples.filter((e) => e.isDirectory()).map((e) => `examples/${e.name}/README.md`);
  return ['README.md', ...docs.sort(), ...readmes.sort()];
}

const COMMENT = /^<!--\s*([\s\S]*?)\s*-->$/;

/** Every fenced block of the document, in order, with the comment that stands just before it. */
export async function docBlocks(doc: string): Promise<DocBlock[]> {
  const source = await readFile(doc, 'utf8');
  const blocks: DocBlock[] = [];
  let cursor = 0;
  const walk = (tokens: Token[]) => {
    let before: Token | undefined;
    for (const token of tokens) {
      if (
        token.type === 'code' &&
        'lang' in token &&
        (token.raw.startsWith('```') || token.raw.startsWith('~~~'))
      ) {
        const at = source.indexOf(token.raw, cursor);
        if (at >= 0) cursor = at + token.raw.length;
        const marker = before?.type === 'html' ? COMMENT.exec(before.raw.trim())?.[1] : undefined;
        blocks.push({
          doc,
          line: at >= 0 ? source.slice(0, at).split('\n').length : 0,
          lang: String(token.lang ?? '').trim(),
          text: String(token.text),
          ...(marker !== undefined && { marker }),
        });
      }
      if (token.type === 'list' && 'items' in token)
        for (const item of token.items as Token[]) walk(itemTokens(item));
      else if (token.type === 'blockquote' && 'tokens' in token) walk(token.tokens ?? []);
      if (token.type !== 'space') before = token;
    }
  };
  walk(lexer(source));
  return blocks;
}

function itemTokens(item: Token): Token[] {
  return 'tokens' in item ? (item.tokens ?? []) : [];
}

/** The text of the block that the comment `<!-- marker -->` stands before: how a test reads what it runs. */
export async function docsBlock(doc: string, marker: string): Promise<string> {
  const block = (await docBlocks(doc)).find((b) => b.marker === marker);
  assert.ok(block, `${doc} has the block <!-- ${marker} -->`);
  return block.text;
}
