import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RequestRecord, ServerSettings, ServerStatus } from '../../src/ipc/bindings';
import { SERVER_POLL_MS, ServerStore, newServerKey } from '../../src/lib/server.svelte';
import { CONTRACT } from '../contract.mjs';
import { fakeApi } from './helpers';

const DEFAULTS: ServerSettings = CONTRACT.serverDefaults;
const PORT_RANGE = CONTRACT.serverRanges.find((r: { key: string }) => r.key === 'port');
const NO_KEY = 'set an API key first: programs on other machines must send it';

const request = (over: Partial<RequestRecord> = {}): RequestRecord => ({
  atMs: 1_764_000_000_000,
  client: '127.0.0.1:53122',
  model: 'Llama-3.2-3B-Instruct-Q4_K_M',
  promptTokens: 812,
  completionTokens: 64,
  ms: 1240,
  status: 200,
  ...over,
});

/** A backend as hearth-app has it: the port's range, the network refused without a key, the URL while on. */
function fakeBackend() {
  const backend = { settings: { ...DEFAULTS }, keySet: false, requests: [] as RequestRecord[] };
  const status = (): ServerStatus => ({
    settings: { ...backend.settings },
    url: backend.settings.enabled ? `http://127.0.0.1:${backend.settings.port}/v1` : null,
    problem: null,
    keySet: backend.keySet,
    requests: [...backend.requests],
  });
  const api = fakeApi('the server store', {
    getServer: vi.fn(async () => status()),
    setServer: vi.fn(async (settings: ServerSettings) => {
      if (!(settings.port >= PORT_RANGE.min && settings.port <= PORT_RANGE.max)) {
        throw { kind: 'invalidInput', message: `the port must be ${PORT_RANGE.text}`, field: 'port' };
      }
      if (settings.network && !backend.keySet) throw { kind: 'invalidInput', message: NO_KEY, field: 'network' };
      backend.settings = { ...settings };
      return status();
    }),
    setServerKey: vi.fn(async (key: string | null) => {
      if (key !== null && key.trim() === '') throw { kind: 'invalidInput', message: 'the key is empty', field: 'key' };
      backend.keySet = key !== null;
      return status();
    }),
  });
  return { backend, api };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('ServerStore', () => {
  it('reads the status; set switches the server on and keeps the answer', async () => {
    const { api } = fakeBackend();
    const store = new ServerStore(api);
    expect(store.status).toBeNull();
    expect(store.settings).toEqual(DEFAULTS);
    await store.refresh();
    expect(store.status?.url).toBeNull();
    expect(store.loading).toBe(false);

    const saving = store.set({ ...DEFAULTS, enabled: true });
    expect(store.settings.enabled).toBe(true); // the switch moves at once
    expect(store.saving).toBe(true);
    expect(await saving).toBe(true);
    expect(api.setServer).toHaveBeenCalledWith({ ...DEFAULTS, enabled: true });
    expect(store.status?.url).toBe(`http://127.0.0.1:${DEFAULTS.port}/v1`);
    expect(store.saving).toBe(false);
    expect(store.error).toBeNull();
  });

  it('a refused switch goes back, its field named; the message stays through reads until a change goes through', async () => {
    const { api } = fakeBackend();
    const store = new ServerStore(api);
    await store.refresh();
    expect(await store.set({ ...DEFAULTS, network: true })).toBe(false);
    expect(store.error).toBe(NO_KEY);
    expect(store.errorFields).toEqual(['network']);
    expect(store.settings.network).toBe(false);

    await store.refresh();
    expect(store.error).toBe(NO_KEY);

    expect(await store.setKey('sk-hearth-0123')).toBe(true);
    expect(store.status?.keySet).toBe(true);
    expect(store.error).toBeNull();
    expect(store.errorFields).toEqual([]);
    expect(await store.set({ ...DEFAULTS, network: true })).toBe(true);
    expect(store.settings.network).toBe(true);
  });

  it('a refused port stays on screen, marked, through reads', async () => {
    const { api } = fakeBackend();
    const store = new ServerStore(api);
    await store.refresh();
    expect(await store.set({ ...DEFAULTS, port: 0 })).toBe(false);
    expect(store.error).toBe(`the port must be ${PORT_RANGE.text}`);
    expect(store.errorFields).toEqual(['port']);
    expect(store.settings.port).toBe(0);
    expect(store.status?.settings.port).toBe(DEFAULTS.port);
    await store.refresh();
    expect(store.settings.port).toBe(0);
  });

  it("the key's refusal names it; a failure that names nothing shows what is in force", async () => {
    const { api } = fakeBackend();
    const store = new ServerStore(api);
    await store.refresh();
    expect(await store.setKey('  ')).toBe(false);
    expect(store.errorFields).toEqual(['key']);
    expect(store.error).toBe('the key is empty');

    vi.mocked(api.setServer).mockRejectedValueOnce({ kind: 'store', message: 'the settings could not be saved' });
    expect(await store.set({ ...DEFAULTS, enabled: true })).toBe(false);
    expect(store.error).toBe('the settings could not be saved');
    expect(store.errorFields).toEqual([]);
    expect(store.settings).toEqual(DEFAULTS);
  });

  it('a failed read says why, apart from the changes, and the next read clears it', async () => {
    const { api } = fakeBackend();
    const store = new ServerStore(api);
    vi.mocked(api.getServer).mockRejectedValueOnce({ kind: 'store', message: 'database is locked' });
    await store.refresh();
    expect(store.readError).toBe('database is locked');
    expect(store.error).toBeNull();
    await store.refresh();
    expect(store.readError).toBeNull();
    expect(store.status).not.toBeNull();
  });

  it('a read under way when a change is made is dropped; no read is asked while it is saved', async () => {
    const { backend, api } = fakeBackend();
    let answerRead: (s: ServerStatus) => void = () => {};
    vi.mocked(api.getServer).mockImplementationOnce(() => new Promise((r) => (answerRead = r)));
    const store = new ServerStore(api);
    const reading = store.refresh();
    const stale = { settings: { ...DEFAULTS }, url: null, problem: null, keySet: false, requests: [] };
    const saving = store.set({ ...DEFAULTS, enabled: true });
    await store.refresh(); // while saving: asks nothing
    expect(api.getServer).toHaveBeenCalledTimes(1);
    await saving;
    answerRead(stale);
    await reading;
    expect(store.settings.enabled).toBe(true);
    expect(store.status?.settings).toEqual(backend.settings);
  });

  it('watch reads now and every SERVER_POLL_MS, so new requests show; stopping it stops the reads', async () => {
    vi.useFakeTimers();
    const { backend, api } = fakeBackend();
    const store = new ServerStore(api);
    const stop = store.watch();
    await vi.advanceTimersByTimeAsync(0);
    expect(api.getServer).toHaveBeenCalledTimes(1);
    expect(store.status?.requests).toEqual([]);

    backend.requests = [request({ status: 499 }), request()];
    await vi.advanceTimersByTimeAsync(SERVER_POLL_MS);
    expect(api.getServer).toHaveBeenCalledTimes(2);
    expect(store.status?.requests.map((r) => r.status)).toEqual([499, 200]);

    await vi.advanceTimersByTimeAsync(SERVER_POLL_MS);
    expect(api.getServer).toHaveBeenCalledTimes(3);
    stop();
    await vi.advanceTimersByTimeAsync(SERVER_POLL_MS * 5);
    expect(api.getServer).toHaveBeenCalledTimes(3);
  });

  it('watch waits for a slow read before it schedules the next', async () => {
    vi.useFakeTimers();
    const { api } = fakeBackend();
    let answer: (s: ServerStatus) => void = () => {};
    vi.mocked(api.getServer).mockImplementationOnce(() => new Promise((r) => (answer = r)));
    const store = new ServerStore(api);
    const stop = store.watch();
    await vi.advanceTimersByTimeAsync(SERVER_POLL_MS * 3);
    expect(api.getServer).toHaveBeenCalledTimes(1);
    answer({ settings: { ...DEFAULTS }, url: null, problem: null, keySet: false, requests: [] });
    await vi.advanceTimersByTimeAsync(SERVER_POLL_MS);
    expect(api.getServer).toHaveBeenCalledTimes(2);
    stop();
  });
});

describe('newServerKey', () => {
  it('is "sk-hearth-" and 32 hex digits, new each time', () => {
    const keys = new Set(Array.from({ length: 20 }, newServerKey));
    expect(keys.size).toBe(20);
    for (const key of keys) expect(key).toMatch(/^sk-hearth-[0-9a-f]{32}$/);
  });
});
