// The machine's ceiling for the action call: a bare node:http server that answers POST
// /v1/chat/actions { type, input } with { output, meta } the way Parley does, parsing and serializing
// JSON, and nothing else.
import { Buffer } from 'node:buffer';
import http from 'node:http';

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString());
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"message":"invalid JSON"}');
      return;
    }
    const text = JSON.stringify({ output: body.input, meta: { cached: false } });
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  });
});
server.keepAliveTimeout = 72_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ ready: true, url: `http://127.0.0.1:${port}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
