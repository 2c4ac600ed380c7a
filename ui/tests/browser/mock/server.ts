// The local OpenAI-compatible server, as hearth-app's App::set_server and set_server_key have it: its settings
// from the contract's defaults, whether a key is saved (never the key), the requests it answered
// (`serverRequests`, newest first; tests add more to `__hearthMock.server.requests`) and ports other programs hold
// (`busyPorts`: switched on there, it says why it is not running). The network is refused without a key, and so
// is removing the key while the network is allowed.
import type { ServerSettings, ServerStatus } from '../../../src/ipc/bindings';
import { SERVER_DEFAULTS, SERVER_RANGES } from './contract';
import { argsRefused, type Handlers } from './ipc';
import { state } from './state';
import { clone, refuse } from './util';

/** get_server: where it listens when it is on and its port is free; why not when it is not. */
function serverStatus(): ServerStatus {
  const { settings, keySet, requests, busyPorts } = state.server;
  const busy = settings.enabled && busyPorts.includes(settings.port);
  return {
    settings: clone(settings),
    // Where programs on this machine reach it, whether or not the network may too.
    url: settings.enabled && !busy ? `http://127.0.0.1:${settings.port}/v1` : null,
    problem: busy ? `port ${settings.port} is in use by another program: choose another port` : null,
    keySet,
    requests: clone(requests),
  };
}

/** What each ranged setting is called in the backend's refusals. */
const SERVER_WORDS: Partial<Record<keyof ServerSettings, string>> = { port: 'the port' };

/** ServerSettings' serde check (a plain string error, like Tauri's; the port a u16), then validate, then the key. */
function setServer(s: ServerSettings) {
  const problems: string[] = [];
  if (!s || typeof s !== 'object') problems.push('settings is not an object');
  else {
    const sent = s as Record<string, unknown>;
    for (const key of Object.keys(s)) if (!(key in SERVER_DEFAULTS)) problems.push(`unknown field ${key}`);
    for (const [key, value] of Object.entries(SERVER_DEFAULTS)) {
      if (typeof sent[key] !== typeof value) problems.push(`${key} is not a ${typeof value}: ${sent[key]}`);
    }
    if (!(Number.isInteger(s.port) && s.port >= 0 && s.port <= 65_535)) problems.push(`port is not a u16: ${s.port}`);
  }
  if (problems.length > 0) argsRefused('set_server', 'settings', problems);
  for (const { key, min, max, text } of SERVER_RANGES) {
    const value = (s as Record<string, unknown>)[key] as number;
    if (!(value >= min && value <= max)) throw refuse(key, `${SERVER_WORDS[key as keyof ServerSettings]} must be ${text}`);
  }
  if (s.network && !state.server.keySet) throw refuse('network', 'set an API key first: programs on other machines must send it');
  // hearth_server::normalize_origin: kept as browsers send them, each once.
  const origins: string[] = [];
  for (const typed of s.allowedOrigins) {
    const t = typed.trim();
    const m = /^(https?):\/\/([^/?#@\s]+)\/?$/i.exec(t);
    if (t !== '*' && !m) {
      throw refuse(
        'allowedOrigins',
        `${JSON.stringify(t)} is not a web origin: write it as https://example.org (a scheme and a host, with a port if any, no path), or * for any`,
      );
    }
    const kept = t === '*' || !m ? t : `${m[1]}://${m[2]}`.toLowerCase();
    if (!origins.includes(kept)) origins.push(kept);
  }
  state.server.settings = { ...clone(s), allowedOrigins: origins };
  return serverStatus();
}

/** set_server_key: a key (never sent back) or null to remove it. */
function setServerKey(key: string | null) {
  if (key === null) {
    if (state.server.settings.network) throw refuse('key', 'the server is open to the network: turn that off before removing its key');
    state.server.keySet = false;
  } else if (key.trim() === '') {
    throw refuse('key', 'the key is empty');
  } else {
    state.server.keySet = true;
  }
  return serverStatus();
}

export const serverCommands = { getServer: serverStatus, setServer, setServerKey } satisfies Partial<Handlers>;
