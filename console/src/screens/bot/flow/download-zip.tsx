// The draft as a zip of the package folder `parley deploy` takes: one top folder named after the bot, the
// draft's files under it as their paths say (bot.json, workflows/, actions/, hooks/, code/, knowledge/,
// tables/). Zipped in the browser: the server has nothing to add to files the console already holds.
import { strToU8, zipSync } from 'fflate';
import { useAction } from '../../../hooks.ts';
import { InlineError } from '../../../ui/components.tsx';
import type { Files } from './draft-model.ts';

/** A bot's name as a file's: what a file system may refuse, as `-`. */
const fileNameOf = (name: string) => name.replace(/[^\w.-]+/g, '-').replace(/^[.-]+/, '') || 'bot';

/** The zip of `files` in a folder `folder/`. */
export function zipPackage(folder: string, files: Files): Uint8Array {
  return zipSync(
    Object.fromEntries(Object.entries(files).map(([file, text]) => [`${folder}/${file}`, strToU8(text)])),
  );
}

/** Saves `bytes` as the file `name`, as a link the user follows would. */
function saveAs(name: string, bytes: Uint8Array) {
  // (A copy: a Blob takes no view of memory that may be shared.)
  const url = URL.createObjectURL(new Blob([bytes.slice()], { type: 'application/zip' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  // The download has started from the link; the address is not needed after.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/** "Download as zip": `files` gives the draft's files (the editor's as they are, or getBotDraft's). */
export function DownloadZip(props: { botName: string; files: () => Promise<Files> | Files }) {
  const download = useAction(async () => {
    const name = fileNameOf(props.botName);
    saveAs(`${name}.zip`, zipPackage(name, await props.files()));
  });
  return (
    <>
      <button type="button" class="secondary" disabled={download.busy} onClick={() => void download.run()}>
        Download as zip
      </button>
      <InlineError error={download.error} />
    </>
  );
}
