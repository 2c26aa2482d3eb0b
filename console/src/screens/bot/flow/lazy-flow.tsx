// The Flow tab, fetched the first time it opens: React Flow and dagre are as big as the rest of the console,
// which every other page would pay for. The view's script (a chunk of its own) and its stylesheet load side
// by side; meanwhile the tab shows the console's loading state, and if either fails, its error and a retry.
import type { ComponentType } from 'preact';
import { useLoad } from '../../../hooks.ts';
import { Loaded } from '../../../ui/components.tsx';
import type { BotScreenProps } from '../screen-props.ts';
// Built apart from the console's stylesheet (scripts/build-console.mjs): this is its address.
import stylesheet from './flow.css?url';

/** Wrapped: a component is a function, which the state setters of useLoad would call as an update. */
interface FlowView {
  Screen: ComponentType<BotScreenProps>;
}

let view: Promise<FlowView> | undefined;

/** Loads the view once; after a failure, the next call (a retry) tries again. */
function loadView(): Promise<FlowView> {
  view ??= Promise.all([import('./flow.tsx'), linkStylesheet(stylesheet)]).then(([module]) => ({
    Screen: module.Flow,
  }));
  view.catch(() => {
    view = undefined;
  });
  return view;
}

/** Links a stylesheet of the console's own (the page's Content Security Policy allows no inline style). */
function linkStylesheet(href: string): Promise<void> {
  if (document.querySelector(`link[rel="stylesheet"][href="${href}"]`)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = href;
    link.onload = () => resolve();
    link.onerror = () => {
      link.remove();
      reject(new Error(`The flow view's stylesheet did not load (${href}).`));
    };
    document.head.append(link);
  });
}

export function Flow(props: BotScreenProps) {
  const loaded = useLoad(loadView, []);
  return <Loaded {...loaded}>{({ Screen }) => <Screen {...props} />}</Loaded>;
}
