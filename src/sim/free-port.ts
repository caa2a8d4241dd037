import { createServer } from 'node:net';

/** A loopback TCP port that was free a moment ago (the kernel's pick for port 0). */
export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      s.close(() => { done(port); });
    });
  });
}
