// A field holding bot code (its schema's contentMediaType says so): the code editor, fetched the first
// time one opens (CodeMirror is a chunk of its own). Until it is there, or if it fails to load, a plain
// text area edits the same text. The draft's files, which the editor completes names from, come from the
// Flow tab's editor through DraftFiles.
import { createContext } from 'preact';
import type { ComponentType } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import type { Files } from './draft-model.ts';

export const DraftFiles = createContext<Files>({});

type Editor = ComponentType<{ label: string; value: string; files: Files; onChange: (code: string) => void }>;

let editor: Promise<{ CodeEditor: Editor }> | undefined;

/** Loads the editor's chunk once; after a failure, the next field to open tries again. */
function loadEditor() {
  editor ??= import('./code-editor.tsx');
  editor.catch(() => {
    editor = undefined;
  });
  return editor;
}

export function CodeField(props: {
  id: string;
  label: string;
  value: string;
  onChange: (code: string | undefined) => void;
}) {
  const files = useContext(DraftFiles);
  const [loaded, setLoaded] = useState<{ CodeEditor: Editor } | undefined>(undefined);
  useEffect(() => {
    let current = true;
    loadEditor().then(
      (module) => current && setLoaded({ CodeEditor: module.CodeEditor }),
      () => undefined, // The text area stays: the code is edited all the same.
    );
    return () => {
      current = false;
    };
  }, []);
  const change = (code: string) => props.onChange(code === '' ? undefined : code);
  if (!loaded)
    return (
      <textarea
        id={props.id}
        rows={6}
        class="json-input"
        value={props.value}
        onInput={(e) => change(e.currentTarget.value)}
      />
    );
  return <loaded.CodeEditor label={props.label} value={props.value} files={files} onChange={change} />;
}
