/**
 * Asks a server what it can do before the canary probes it: the served models (`/v1/models`,
 * retried like any request: the model to ask comes from it), and, in parallel with one attempt
 * each under a short limit, the info endpoint of its engine: llama.cpp's `/props`, SGLang's
 * `/get_server_info` (`/server_info` on newer builds), TGI's `/info`. With no engine known, every
 * one is asked; the ones that do not answer are left out.
 */
import { getJson, listModels, type ClientOptions, type ModelsResult } from './client.js';
import type { EngineName, ServerInfoBodies } from './capabilities.js';

/** The longest an info endpoint may take. */
export const discoveryTimeoutMs = 5000;

/** What {@link discoverServer} read. */
export interface Discovery {
  readonly models: ModelsResult;
  readonly bodies: ServerInfoBodies;
}

async function body(client: ClientOptions, path: string): Promise<unknown> {
  const r = await getJson(client, path);
  return r.ok ? r.value : undefined;
}

/** Reads `/v1/models` and the engine's info endpoint; never rejects. */
export async function discoverServer(client: ClientOptions, engine: EngineName | undefined): Promise<Discovery> {
  const quick: ClientOptions = { ...client, timeoutMs: Math.min(client.timeoutMs, discoveryTimeoutMs) };
  const ask = (e: EngineName): boolean => engine === undefined || engine === e;
  const [models, props, serverInfo, tgiInfo] = await Promise.all([
    listModels(client),
    ask('llamacpp') ? body(quick, '/props') : undefined,
    ask('sglang') ? body(quick, '/get_server_info').then((v) => v ?? body(quick, '/server_info')) : undefined,
    ask('tgi') ? body(quick, '/info') : undefined,
  ]);
  const bodies: ServerInfoBodies = {
    ...(models.ok ? { models: models.raw } : {}),
    ...(props === undefined ? {} : { props }),
    ...(serverInfo === undefined ? {} : { serverInfo }),
    ...(tgiInfo === undefined ? {} : { tgiInfo }),
  };
  return { models, bodies };
}
