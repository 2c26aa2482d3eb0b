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

// What bot code sees that the code editor completes, made at build time (scripts/build-console.mjs).
declare module 'parley:code-names' {
  interface Name {
    name: string;
    detail: string;
  }
  const names: { event: Name[]; client: Name[] };
  export default names;
}
