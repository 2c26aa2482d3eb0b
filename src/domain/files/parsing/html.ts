import { ElementType, parseDocument } from 'htmlparser2';
import type { PassageDraft } from '../passages.ts';

/** Elements whose text is no part of the document. */
const SKIPPED = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'canvas',
  'iframe',
  'head',
  'nav',
  'form',
  'button',
  'select',
]);
const HEADINGS: Record<string, number> = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };
/** Elements that start a block: text around them is a paragraph of its own. */
const BLOCKS = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'header',
  'footer',
  'aside',
  'body',
  'html',
  'figure',
  'figcaption',
  'dl',
  'dt',
  'dd',
  'details',
  'summary',
  'address',
  'center',
  'br',
  'hr',
  'li',
  ...Object.keys(HEADINGS),
  'ul',
  'ol',
  'table',
  'pre',
  'blockquote',
]);

/** The node types of htmlparser2's DOM (domhandler's), as its parser answers them. */
type ChildNode = ReturnType<typeof parseDocument>['children'][number];
type Element = Extract<ChildNode, { name: string; children: ChildNode[] }>;

const isElement = (node: ChildNode): node is Element =>
  node.type === ElementType.Tag || node.type === ElementType.Script || node.type === ElementType.Style;

/** The visible text of a node, whitespace collapsed (`pre` keeps its lines). */
function textOf(node: ChildNode, keepLines = false): string {
  if (node.type === ElementType.Text) return keepLines ? node.data : node.data.replace(/\s+/g, ' ');
  if (!isElement(node) || SKIPPED.has(node.name)) return '';
  if (node.name === 'br') return keepLines ? '\n' : ' ';
  const inner = node.children.map((c) => textOf(c, keepLines)).join('');
  return BLOCKS.has(node.name) && !keepLines ? ` ${inner} ` : inner;
}

const clean = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * An HTML page's structure as passages (htmlparser2's forgiving parser): `h1` a title, `h2`-`h6`
 * subtitles, paragraphs, lists and tables as Markdown, `pre` as code, quotes; scripts, styles,
 * navigation and forms are left out.
 */
export function htmlPassages(html: string): PassageDraft[] {
  const document = parseDocument(html, { decodeEntities: true });
  const passages: PassageDraft[] = [];
  let loose = '';
  const flush = () => {
    const text = clean(loose);
    if (text) passages.push({ type: 'paragraph', content: text });
    loose = '';
  };
  const push = (type: PassageDraft['type'], content: string) => {
    flush();
    if (content.trim()) passages.push({ type, content: content.trim() });
  };
  const walk = (nodes: ChildNode[]) => {
    for (const node of nodes) {
      if (node.type === ElementType.Text) {
        loose += node.data;
        continue;
      }
      if (!isElement(node) || SKIPPED.has(node.name)) continue;
      const level = HEADINGS[node.name];
      if (level !== undefined) {
        const text = clean(textOf(node));
        if (text) push(level === 1 ? 'title' : 'subtitle', `${'#'.repeat(level)} ${text}`);
      } else if (node.name === 'ul' || node.name === 'ol') {
        push('list', listOf(node));
      } else if (node.name === 'table') {
        push('table', tableOf(node));
      } else if (node.name === 'pre') {
        push(
          'code',
          `\`\`\`\n${node.children
            .map((c) => textOf(c, true))
            .join('')
            .replace(/\n+$/, '')}\n\`\`\``,
        );
      } else if (node.name === 'blockquote') {
        const text = clean(textOf(node));
        if (text) push('blockquote', `> ${text}`);
      } else if (node.name === 'p') {
        push('paragraph', clean(textOf(node)));
      } else if (BLOCKS.has(node.name)) {
        flush();
        walk(node.children);
        flush();
      } else {
        loose += textOf(node);
      }
    }
  };
  // The page's title heads the passages when the body has no h1.
  const title = document.children.flatMap((n) => (isElement(n) ? findAll(n, 'title') : []))[0];
  const pageTitle = title ? clean(textOf(title)) : '';
  walk(document.children);
  flush();
  if (pageTitle && !passages.some((p) => p.type === 'title')) {
    passages.unshift({ type: 'title', content: `# ${pageTitle}` });
  }
  return passages;
}

function findAll(node: Element, name: string): Element[] {
  const found = node.name === name ? [node] : [];
  for (const child of node.children) if (isElement(child)) found.push(...findAll(child, name));
  return found;
}

function listOf(list: Element, depth = 0): string {
  const ordered = list.name === 'ol';
  const lines: string[] = [];
  let n = 0;
  for (const item of list.children) {
    if (!isElement(item) || item.name !== 'li') continue;
    n++;
    const own = item.children.filter((c) => !(isElement(c) && (c.name === 'ul' || c.name === 'ol')));
    const text = clean(own.map((c) => textOf(c)).join(''));
    lines.push(`${'  '.repeat(depth)}${ordered ? `${n}.` : '-'} ${text}`);
    for (const child of item.children) {
      if (isElement(child) && (child.name === 'ul' || child.name === 'ol'))
        lines.push(listOf(child, depth + 1));
    }
  }
  return lines.join('\n');
}

function tableOf(table: Element): string {
  const rows = findAll(table, 'tr').map((tr) =>
    tr.children
      .filter((c): c is Element => isElement(c) && (c.name === 'td' || c.name === 'th'))
      .map((c) => clean(textOf(c)).replace(/\|/g, '\\|')),
  );
  const width = Math.max(0, ...rows.map((r) => r.length));
  if (width === 0) return '';
  const line = (cells: string[]) =>
    `| ${[...cells, ...Array<string>(width - cells.length).fill('')].join(' | ')} |`;
  const [head = [], ...body] = rows;
  return [line(head), line(Array<string>(width).fill('---')), ...body.map(line)].join('\n');
}
