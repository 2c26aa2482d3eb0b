// @botpress/client's declarations mention Node's Buffer; the console is typed for the browser, without
// Node's types: a nominal stand-in keeps the client's types from collapsing.
declare class Buffer {
  private readonly nodeBuffer: 'Buffer';
}
