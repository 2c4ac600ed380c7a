import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LoadParams, LoadSettings } from '../../src/ipc/bindings';
import { SAVE_DEBOUNCE_MS } from '../../src/lib/autosave.svelte';
import { LoadSettingsStore } from '../../src/lib/load-settings.svelte';
import { deepEqual } from '../../src/lib/settings';
import { fakeApi } from './helpers';
import { LOAD_DEFAULTS, loadParams, model } from './settings-fixtures';

/** A backend with a model loaded with `loaded` and `saved` settings saved for it. */
function fakeBackend(loaded = loadParams(), saved = loaded) {
  const backend = {
    model: model(loaded),
    saved: structuredClone(saved),
    /** The next set_load_settings / reload_model calls reject with these (FIFO). */
    rejectSave: [] as unknown[],
    rejectReload: [] as unknown[],
    /** Resolve the reload under way. */
    finishReload: null as (() => void) | null,
    holdReload: false,
    saves: [] as LoadParams[],
    calls: [] as string[],
  };
  const settings = (): LoadSettings =>
    structuredClone({
      model: backend.model,
      saved: backend.saved,
      defaults: LOAD_DEFAULTS,
      needsReload: !deepEqual(backend.saved, backend.model.load),
    });
  const api = fakeApi('the load settings store', {
    getLoadSettings: vi.fn(async () => {
      backend.calls.push('get');
      return settings();
    }),
    setLoadSettings: vi.fn(async (params: LoadParams) => {
      backend.calls.push('set');
      backend.saves.push(structuredClone(params));
      const rejection = backend.rejectSave.shift();
      if (rejection) throw rejection;
      backend.saved = structuredClone(params);
      return settings();
    }),
    reloadModel: vi.fn(async () => {
      backend.calls.push('reload');
      if (backend.holdReload) await new Promise<void>((r) => (backend.finishReload = r));
      const rejection = backend.rejectReload.shift();
      if (rejection) throw rejection;
      backend.model = model(structuredClone(backend.saved));
      return settings();
    }),
  });
  return Object.assign(backend, { api });
}

async function setup(loaded?: LoadParams, saved?: LoadParams) {
  const backend = fakeBackend(loaded, saved);
  const reloaded = vi.fn();
  const store = new LoadSettingsStore(backend.api, reloaded);
  await store.load();
  return { backend, store, reloaded };
}

const pause = (ms = SAVE_DEBOUNCE_MS) => vi.advanceTimersByTimeAsync(ms);

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('LoadSettingsStore', () => {
  it('shows the saved settings, the model as loaded and whether a reload is needed', async () => {
    const { store } = await setup(loadParams(), loadParams({ nCtx: 4096 }));
    expect(store.params).toEqual(loadParams({ nCtx: 4096 }));
    expect(store.info?.model.nCtx).toBe(8192);
    expect(store.needsReload).toBe(true);
    expect(store.isDefault('nCtx')).toBe(false);
    expect(store.isDefault('nBatch')).toBe(true);
    expect(store.status).toBe('idle');
  });

  it('says so, word for word, when no model is loaded', async () => {
    const backend = fakeBackend();
    vi.mocked(backend.api.getLoadSettings).mockRejectedValueOnce({ kind: 'noModel', message: 'no model is loaded' });
    const store = new LoadSettingsStore(backend.api);
    await store.load();
    expect(store.loadError).toBe('no model is loaded');
    expect(store.params).toBe(null);
    await store.load();
    expect(store.loadError).toBe(null);
    expect(store.params).toEqual(loadParams());
  });

  it('saves an edit after the pause; the backend then says a reload is needed', async () => {
    const { store, backend } = await setup();
    store.set('nCtx', 4096);
    expect(store.status).toBe('pending');
    expect(store.needsReload).toBe(false);
    await pause();
    expect(backend.saves).toEqual([loadParams({ nCtx: 4096 })]);
    expect(store.status).toBe('saved');
    expect(store.needsReload).toBe(true);
    store.reset('nCtx');
    await pause();
    expect(backend.saves.at(-1)).toEqual(LOAD_DEFAULTS);
    expect(store.needsReload).toBe(false);
  });

  it.each([
    ['kvCacheType', 'q8_0', 'a quantized KV cache needs flash attention (auto or on)', 'kvCacheType,flashAttention', ['kvCacheType', 'flashAttention']],
    ['chatTemplate', '{% for', 'the chat template does not compile: syntax error: unexpected end of input', 'chatTemplate', ['chatTemplate']],
    ['nCtx', 8, 'context length must be between 16 and 1048576 tokens', 'nCtx', ['nCtx']],
    ['nBatch', 0, 'batch and ubatch sizes must be between 1 and 65536', 'nBatch,nUbatch', ['nBatch', 'nUbatch']],
  ] as const)('shows a refused %s word for word and marks the fields the backend names', async (key, value, message, field, keys) => {
    const { store, backend } = await setup(loadParams({ flashAttention: 'off' }));
    backend.rejectSave.push({ kind: 'invalidInput', message, field });
    store.set(key, value);
    await pause();
    expect(store.status).toBe('rejected');
    expect(store.error).toBe(message);
    expect(store.errorKeys).toEqual(keys);
    expect(store.params?.[key]).toBe(value); // stays on screen to be fixed
    expect(store.needsReload).toBe(false);
  });

  it('does not send a number the backend cannot parse', async () => {
    const { store, backend } = await setup();
    store.set('nThreads', -2);
    await pause();
    expect(backend.saves).toEqual([]);
    expect(store.status).toBe('unfinished');
    expect(store.errorKeys).toEqual(['nThreads']);
  });

  it('reload saves a waiting edit first, shows progress, then the new resolved values', async () => {
    const { store, backend, reloaded } = await setup();
    backend.holdReload = true;
    store.set('nCtx', 2048);
    const reloading = store.reload();
    await vi.advanceTimersByTimeAsync(0);
    expect(backend.calls).toEqual(['get', 'set', 'reload']);
    expect(store.reloading).toBe(true);
    store.set('nBatch', 64); // the fields wait for the reload
    expect(store.params?.nBatch).toBe(512);
    backend.finishReload!();
    await reloading;
    expect(store.reloading).toBe(false);
    expect(store.reloaded).toBe(true);
    expect(store.needsReload).toBe(false);
    expect(store.info?.model.nCtx).toBe(2048);
    expect(store.info?.model.load.nCtx).toBe(2048);
    expect(reloaded).toHaveBeenCalledWith(null);
    store.set('nBatch', 256);
    expect(store.reloaded).toBe(false); // an edit since: the confirmation goes
  });

  it('a refused reload shows the backend message and where things stand', async () => {
    const { store, backend, reloaded } = await setup(loadParams(), loadParams({ nCtx: 1_048_576 }));
    const message = 'failed to create the context; the model was loaded again with its previous settings';
    backend.rejectReload.push({ kind: 'engine', message });
    await store.reload();
    expect(store.reloadError).toBe(message);
    expect(store.reloaded).toBe(false);
    expect(store.needsReload).toBe(true);
    expect(store.info?.model.nCtx).toBe(8192);
    expect(backend.calls).toEqual(['get', 'reload', 'get']);
    expect(reloaded).toHaveBeenCalledWith(message);
    store.set('nCtx', 16384);
    expect(store.reloadError).toBe(null);
  });

  it('does not reload values the backend refused to save', async () => {
    const { store, backend } = await setup();
    backend.rejectSave.push({ kind: 'invalidInput', message: 'threads must be between 1 and 1024' });
    store.set('nThreads', 5000);
    await store.reload();
    expect(backend.calls).toEqual(['get', 'set']);
    expect(store.error).toBe('threads must be between 1 and 1024');
  });

  it('a model that cannot even be loaded back leaves nothing to edit', async () => {
    const { store, backend } = await setup(loadParams(), loadParams({ nCtx: 999_999 }));
    backend.rejectReload.push({ kind: 'engine', message: 'out of memory; the model could not be loaded again either' });
    vi.mocked(backend.api.getLoadSettings).mockRejectedValueOnce({ kind: 'noModel', message: 'no model is loaded' });
    await store.reload();
    expect(store.reloadError).toBe('out of memory; the model could not be loaded again either');
    expect(store.loadError).toBe('no model is loaded');
    expect(store.params).toBe(null);
  });
});

describe('LoadSettingsStore while reloading', () => {
  it('reopening the panel mid-reload does not read the settings under it', async () => {
    const { store, backend } = await setup(loadParams(), loadParams({ nCtx: 2048 }));
    backend.holdReload = true;
    const reloading = store.reload();
    await vi.advanceTimersByTimeAsync(0);
    await store.load();
    expect(backend.calls).toEqual(['get', 'reload']);
    backend.finishReload!();
    await reloading;
    expect(store.info?.model.nCtx).toBe(2048);
  });
});
