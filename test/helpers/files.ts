import assert from 'node:assert/strict';
import type { Client } from '@botpress/client';
import { waitFor } from './runtime.ts';

type FileStatus = Awaited<ReturnType<Client['getFile']>>['file']['status'];

/** Waits until a file reaches one of `statuses` (an end state of upload or indexing); answers the file. */
export async function fileSettled(
  client: Client,
  id: string,
  statuses: FileStatus[] = ['indexing_completed'],
) {
  const ends: FileStatus[] = ['upload_completed', 'upload_failed', 'indexing_completed', 'indexing_failed'];
  const file = await waitFor(
    `file ${id} to reach ${statuses.join(' or ')}`,
    async () => {
      const { file } = await client.getFile({ id });
      if (statuses.includes(file.status)) return file;
      if (
        ends.includes(file.status) &&
        !statuses.includes(file.status) &&
        file.status !== 'upload_completed'
      ) {
        assert.fail(`file ${id} ended ${file.status}: ${file.failedStatusReason}`);
      }
      return undefined;
    },
    20_000,
    50,
  );
  return file;
}

/**
 * A PDF with text in Helvetica: each page a list of lines, each line at its font size. Written here
 * (a few objects, a cross-reference table) so that tests need no PDF tool.
 */
export function makePdf(pages: { text: string; size?: number }[][]): Buffer {
  const objects: string[] = [];
  const add = (body: string) => objects.push(body);
  add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const pagesId = add('');
  const kids: number[] = [];
  for (const lines of pages) {
    let y = 750;
    let ops = 'BT\n';
    for (const { text, size = 12 } of lines) {
      const escaped = text.replace(/[\\()]/g, (c) => `\\${c}`);
      ops += `/F1 ${size} Tf 1 0 0 1 50 ${y} Tm (${escaped}) Tj\n`;
      y -= size * 1.6;
    }
    ops += 'ET';
    const content = add(`<< /Length ${Buffer.byteLength(ops)} >>\nstream\n${ops}\nendstream`);
    kids.push(
      add(
        `<< /Type /Page /Parent ${pagesId} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 1 0 R >> >> /Contents ${content} 0 R >>`,
      ),
    );
  }
  objects[pagesId - 1] =
    `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`;
  const catalog = add(`<< /Type /Catalog /Pages ${pagesId} 0 R >>`);
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  out += offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('');
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}
