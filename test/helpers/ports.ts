import net from 'node:net';

/** A TCP port on 127.0.0.1 that nothing listens on now, for a process the test starts on it. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address !== 'object') throw new Error('no port was given');
  return address.port;
}
