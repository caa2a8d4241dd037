import { afterEach } from 'vitest';
import { startSimServer, type SimServer, type SimServerOptions } from '../../src/sim/server.js';

/**
 * The simulated server for one test at a time: `start()` launches it and it is closed after each
 * test of the file that calls this.
 */
export function useSimServer(): (options?: SimServerOptions) => Promise<SimServer> {
  let sim: SimServer | undefined;
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });
  return async (options = {}) => {
    sim = await startSimServer(options);
    return sim;
  };
}
