// Precompressed copies of built browser assets, which the server picks by Accept-Encoding.
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

/** Writes a file and its compressed copies (`.gz`, `.br`). */
export async function writeWithCompressed(file, content) {
  await writeFile(file, content);
  await writeFile(`${file}.gz`, await gzip(content, { level: 9 }));
  await writeFile(
    `${file}.br`,
    await brotli(content, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }),
  );
}
