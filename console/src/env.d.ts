// @botpress/client's declarations mention Node's Buffer; the console is typed for the browser, without
// Node's types: a nominal stand-in keeps the client's types from collapsing.
declare class Buffer {
  private readonly nodeBuffer: 'Buffer';
}

// `import href from './x.css?url'`: the stylesheet built on its own, and its address (scripts/build-console.mjs).
declare module '*.css?url' {
  const href: string;
  export default href;
}
