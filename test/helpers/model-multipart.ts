// Reads a multipart/form-data body (what `POST /v1/audio/transcriptions` gets): enough of RFC 7578 for
// the fields and files an OpenAI client sends, for the test model server.

export interface FormFile {
  filename: string;
  contentType?: string;
  size: number;
}

/** A multipart body read: its text fields, and what its files were (not their content). */
export class MultipartForm {
  readonly fields: Record<string, string> = {};
  readonly files: Record<string, FormFile> = {};
}

/** The parts of `body`, or undefined when `contentType` is not multipart with a boundary. */
export function readMultipart(contentType: string | undefined, body: Buffer): MultipartForm | undefined {
  const boundary = /^multipart\/form-data;.*boundary="?([^";]+)"?/i.exec(contentType ?? '')?.[1];
  if (boundary === undefined) return undefined;
  const form = new MultipartForm();
  const delimiter = Buffer.from(`--${boundary}`);
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    const start = at + delimiter.length;
    const next = body.indexOf(delimiter, start);
    if (next === -1) break;
    // A part is `\r\n<headers>\r\n\r\n<content>\r\n` between two delimiters.
    const part = body.subarray(start + 2, next - 2);
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd !== -1)
      readPart(part.subarray(0, headerEnd).toString('utf8'), part.subarray(headerEnd + 4), form);
    at = next;
  }
  return form;
}

function readPart(headers: string, content: Buffer, form: MultipartForm): void {
  const disposition = /^content-disposition:(.*)$/im.exec(headers)?.[1] ?? '';
  const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
  if (name === undefined) return;
  const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
  if (filename === undefined) {
    form.fields[name] = content.toString('utf8');
    return;
  }
  const contentType = /^content-type:\s*(.*)$/im.exec(headers)?.[1]?.trim();
  form.files[name] = { filename, ...(contentType !== undefined && { contentType }), size: content.length };
}
