// A code card's code in CodeMirror 6, a chunk of its own (code-field.tsx loads it): TypeScript's syntax,
// and completion after a dot of the names bot code sees (code-names.ts). Names, not types: no type check.
// Tab is left to the browser (CodeMirror's default keymap binds it to nothing), so it moves the focus on.
import { javascript, javascriptLanguage } from '@codemirror/lang-javascript';
import type { CompletionContext, CompletionResult } from '@codemirror/autocomplete';
import { basicSetup, EditorView } from 'codemirror';
import { useEffect, useRef } from 'preact/hooks';
import { codeNames } from './code-names.ts';
import type { Files } from './draft-model.ts';

/** `object.partial` right before the cursor, the object not itself a member (`a.event.` is not `event.`). */
const MEMBER = /(?<![\w$.])([A-Za-z_$][\w$]*)\.([\w$]*)$/;

function completeMembers(files: () => Files) {
  return (context: CompletionContext): CompletionResult | null => {
    const line = context.state.doc.lineAt(context.pos);
    const [, object, partial] = MEMBER.exec(line.text.slice(0, context.pos - line.from)) ?? [];
    const all = codeNames(files());
    const names = object !== undefined && Object.hasOwn(all, object) ? all[object] : undefined;
    if (partial === undefined || !names?.length) return null;
    return {
      from: context.pos - partial.length,
      options: names.map(({ name, detail }) => ({ label: name, detail, type: 'property' })),
      validFor: /^[\w$]*$/,
    };
  };
}

/**
 * The page's stylesheets stop at the shadow root: the editor's size and focus ring are set here. It
 * opens a few lines tall (a card's code is seldom one line), and the completion list stays narrow
 * enough for the form's column, each name's description cut to fit.
 */
const LOOK = EditorView.theme({
  '&': { maxHeight: '24rem', fontSize: '0.85rem', borderRadius: 'var(--radius)' },
  '&.cm-focused': { outline: '2px solid var(--focus)', outlineOffset: '1px' },
  '.cm-scroller': { fontFamily: 'var(--mono)' },
  '.cm-content, .cm-gutter': { minHeight: '6lh' },
  '.cm-tooltip.cm-tooltip-autocomplete > ul': { maxWidth: 'min(26rem, 90vw)' },
  '.cm-tooltip.cm-tooltip-autocomplete > ul > li': { overflow: 'hidden', textOverflow: 'ellipsis' },
});

export function CodeEditor(props: {
  label: string;
  value: string;
  files: Files;
  onChange: (code: string) => void;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | undefined>(undefined);
  // The editor is made once; what it reads later is read through these.
  const latest = useRef(props);
  latest.current = props;

  useEffect(() => {
    if (!host.current) return;
    // In a shadow root, CodeMirror adds its styles as a constructed stylesheet of that root; on the page
    // itself it would add <style> elements, which the console's Content Security Policy refuses.
    const root = host.current.shadowRoot ?? host.current.attachShadow({ mode: 'open' });
    const editor = new EditorView({
      parent: root,
      root,
      doc: latest.current.value,
      extensions: [
        basicSetup,
        javascript({ typescript: true }),
        javascriptLanguage.data.of({ autocomplete: completeMembers(() => latest.current.files) }),
        EditorView.contentAttributes.of({ 'aria-label': latest.current.label }),
        EditorView.updateListener.of((update) => {
          const code = update.state.doc.toString();
          if (update.docChanged && code !== latest.current.value) latest.current.onChange(code);
        }),
        LOOK,
      ],
    });
    view.current = editor;
    return () => editor.destroy();
  }, []);

  // A value changed from outside (another card's, after one is removed) replaces the text; not while the
  // editor has the focus: then a render may still carry the text of a few keys ago, which is not news.
  useEffect(() => {
    const editor = view.current;
    if (editor && !editor.hasFocus && editor.state.doc.toString() !== props.value)
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: props.value } });
  }, [props.value]);

  return <div class="code-editor" ref={host} />;
}
