import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Preset, SamplingParams, SettingsScope } from '../../src/ipc/bindings';
import { SAVE_DEBOUNCE_MS, SettingsStore } from '../../src/lib/settings.svelte';
import { SAMPLER_STAGES, type ScopeContext, type ScopeKind } from '../../src/lib/settings';
import { fakeApi } from './helpers';
import { BUILT_IN, DEFAULTS, RANGES, params } from './settings-fixtures';

type Deferred = { params: SamplingParams; resolve: () => void; reject: (e: unknown) => void };

/** The panel's context: chat 7 on the loaded model /m.gguf. */
const CONTEXT: ScopeContext = { chatId: 7, modelPath: '/m.gguf' };
const SCOPES: Record<ScopeKind, SettingsScope> = {
  chat: { kind: 'chat', id: 7 },
  model: { kind: 'model', path: '/m.gguf' },
  global: { kind: 'global' },
};
/** The backend's lookup order: a chat inherits from the loaded model's scope, everything from the global one. */
const BROADER: Record<ScopeKind, ScopeKind[]> = { chat: ['chat', 'model', 'global'], model: ['model', 'global'], global: ['global'] };

/**
 * A backend with the scopes of CONTEXT (each scope's own settings in `own`; the model's count
 * for a chat while `modelLoaded`), answering at once or, with `hold`, when the test says so.
 */
function fakeBackend(own: Partial<Record<ScopeKind, SamplingParams>> = {}, modelLoaded = true) {
  const held: Deferred[] = [];
  const backend = {
    own: structuredClone(own),
    presets: [] as Preset[],
    hold: false,
    /** The next set_sampling calls reject with these (FIFO). */
    rejections: [] as unknown[],
    held,
    saves: [] as SamplingParams[],
    /** The scope of each set_sampling call. */
    savedTo: [] as ScopeKind[],
  };
  const api = fakeApi('the settings store', {
    getSampling: vi.fn(async (asked: SettingsScope | null) => {
      const scope = asked ?? SCOPES.global;
      const chain = BROADER[scope.kind].filter((k) => k === scope.kind || k !== 'model' || modelLoaded);
      const from = chain.find((k) => backend.own[k]);
      return {
        current: structuredClone(from ? backend.own[from]! : params()),
        source: from ? SCOPES[from] : null,
        own: backend.own[scope.kind] !== undefined,
        defaults: params(),
        ranges: RANGES,
        presets: structuredClone([...BUILT_IN, ...backend.presets]),
      };
    }),
    setSampling: vi.fn((p: SamplingParams, asked: SettingsScope | null) => {
      const scope = asked ?? SCOPES.global;
      backend.saves.push(structuredClone(p));
      backend.savedTo.push(scope.kind);
      const accept = () => {
        backend.own[scope.kind] = structuredClone(p);
        return p;
      };
      if (backend.hold) {
        return new Promise<SamplingParams>((resolve, reject) => held.push({ params: p, resolve: () => resolve(accept()), reject }));
      }
      const rejection = backend.rejections.shift();
      return rejection ? Promise.reject(rejection) : Promise.resolve(accept());
    }),
    clearSampling: vi.fn(async (scope: SettingsScope) => {
      delete backend.own[scope.kind];
      return null;
    }),
    savePreset: vi.fn(async (name: string, p: SamplingParams) => {
      if (BUILT_IN.some((b) => b.name.toLowerCase() === name.trim().toLowerCase())) {
        throw { kind: 'invalidInput', message: `choose another name: "${name.trim()}" is empty or a built-in preset`, field: 'name' };
      }
      backend.presets = [...backend.presets.filter((x) => x.name !== name.trim()), { name: name.trim(), params: p, builtIn: false }];
      return null;
    }),
    deletePreset: vi.fn(async (name: string) => {
      backend.presets = backend.presets.filter((x) => x.name !== name);
      return null;
    }),
  });
  return Object.assign(backend, { api });
}

/** A store opened for CONTEXT (or `context`) over a backend with `own` settings. */
async function setup(current?: SamplingParams, own: Partial<Record<ScopeKind, SamplingParams>> = {}, context = CONTEXT) {
  const backend = fakeBackend(current ? { global: current, ...own } : own, context.modelPath !== null);
  const store = new SettingsStore(backend.api);
  await store.open(context);
  return { backend, store };
}

/** Let the debounce run out and the answer arrive. */
async function pause(ms = SAVE_DEBOUNCE_MS) {
  await vi.advanceTimersByTimeAsync(ms);
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('SettingsStore', () => {
  it('loads the current values, the defaults and the ranges', async () => {
    const { store } = await setup(params({ topP: 0.9, stop: ['</s>'] }));
    expect(store.loaded).toBe(true);
    expect(store.params?.topP).toBe(0.9);
    expect(store.defaults).toEqual(DEFAULTS);
    expect(store.ranges).toEqual(RANGES);
    expect(store.changed).toEqual(['topP', 'stop']);
    expect(store.isDefault('topP')).toBe(false);
    expect(store.isDefault('topK')).toBe(true);
    expect(store.preset).toBe(null);
    expect(store.status).toBe('idle');
    expect(store.layout).toEqual(SAMPLER_STAGES);
    expect(store.presets.map((p) => p.name)).toEqual(['Precise', 'Balanced', 'Creative']);
  });

  it('reports a failed load, and Retry asks again', async () => {
    const backend = fakeBackend();
    vi.mocked(backend.api.getSampling).mockRejectedValueOnce({ kind: 'store', message: 'Could not read the settings.' });
    const store = new SettingsStore(backend.api);
    await store.open(CONTEXT);
    expect(store.loaded).toBe(false);
    expect(store.loadError).toBe('Could not read the settings.');
    await store.load();
    expect(store.loaded).toBe(true);
    expect(store.loadError).toBe(null);
  });

  it('saves once, 300 ms after the last of several edits, with all the values', async () => {
    const { store, backend } = await setup();
    store.set('topP', 0.5);
    await pause(SAVE_DEBOUNCE_MS - 50);
    store.set('temperature', 0.3);
    expect(store.status).toBe('pending');
    expect(store.pending).toBe(true);
    await pause(SAVE_DEBOUNCE_MS - 50);
    expect(backend.saves).toEqual([]);
    await pause(50);
    expect(backend.saves).toEqual([params({ topP: 0.5, temperature: 0.3 })]);
    expect(store.status).toBe('saved');
    expect(store.pending).toBe(false);
    expect(store.error).toBe(null);
  });

  it('shows the backend rejection, marks the field it names, and clears it once a save succeeds', async () => {
    const { store, backend } = await setup();
    backend.rejections.push({ kind: 'invalidInput', message: 'topP must be between 0 and 1, got 2', field: 'topP' });
    store.set('topP', 2);
    await pause();
    expect(store.status).toBe('rejected');
    expect(store.error).toBe('topP must be between 0 and 1, got 2');
    expect(store.errorKeys).toEqual(['topP']);
    expect(store.params?.topP).toBe(2); // the value stays on screen to be fixed

    store.set('topP', 0.8);
    expect(store.error).not.toBe(null); // still shown until the fix is saved
    await pause();
    expect(backend.saves.at(-1)?.topP).toBe(0.8);
    expect(store.status).toBe('saved');
    expect(store.error).toBe(null);
    expect(store.errorKeys).toEqual([]);
  });

  it.each([
    ['a nested field, by its top-level name', 'logitBias.bias', ['logitBias']],
    ['no field at all', undefined, []],
    ['a field the panel does not have', 'somethingElse', []],
  ] as const)('marks %s', async (_, field, keys) => {
    const { store, backend } = await setup();
    backend.rejections.push({ kind: 'invalidInput', message: 'refused', ...(field ? { field } : {}) });
    store.set('logitBias', [{ target: { kind: 'token', id: 1 }, bias: -1000 }]);
    await pause();
    expect(store.error).toBe('refused');
    expect(store.errorKeys).toEqual(keys);
  });

  it('does not send an unfinished grammar and says what is missing', async () => {
    const { store, backend } = await setup();
    store.set('constraint', { kind: 'gbnf', source: '' });
    await pause();
    expect(backend.saves).toEqual([]);
    expect(store.status).toBe('unfinished');
    expect(store.error).toBe('Write a GBNF grammar, or set Grammar to None.');
    expect(store.errorKeys).toEqual(['constraint']);
    store.set('constraint', { kind: 'gbnf', source: 'root ::= "yes"' });
    await pause();
    expect(backend.saves).toHaveLength(1);
    expect(store.status).toBe('saved');
    expect(store.error).toBe(null);
  });

  it('flush saves at once', async () => {
    const { store, backend } = await setup();
    store.set('maxTokens', 256);
    await store.flush();
    expect(backend.saves).toEqual([params({ maxTokens: 256 })]);
    expect(store.status).toBe('saved');
    await pause(1000);
    expect(backend.saves).toHaveLength(1);
    await store.flush(); // nothing pending: no call
    expect(backend.saves).toHaveLength(1);
  });

  it('sends one request at a time and the latest values last', async () => {
    const { store, backend } = await setup();
    backend.hold = true;
    store.set('topK', 10);
    await pause();
    expect(store.status).toBe('saving');
    store.set('topK', 20);
    await pause();
    expect(backend.saves).toHaveLength(1); // waits for the first answer
    backend.held[0].resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(backend.saves.map((p) => p.topK)).toEqual([10, 20]);
    expect(store.status).toBe('saving');
    backend.held[1].resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(store.status).toBe('saved');
  });

  it('ignores the answer to a save that newer edits overtook', async () => {
    const { store, backend } = await setup();
    backend.hold = true;
    store.set('topP', 2);
    await pause();
    store.set('topP', 0.7); // debounce running while the bad value is in flight
    backend.held[0].reject({ kind: 'invalidInput', message: 'topP must be between 0 and 1, got 2', field: 'topP' });
    await vi.advanceTimersByTimeAsync(0);
    expect(store.error).toBe(null);
    expect(store.status).toBe('pending');
    await pause();
    backend.held[1].resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(store.status).toBe('saved');
    expect(store.error).toBe(null);
  });

  it.each(BUILT_IN.map((p) => [p.name, p] as const))('applies the %s preset (the backend\'s values) and saves it', async (name, preset) => {
    const { store, backend } = await setup(params({ seed: 7, stop: ['x'], temperature: 1.9 }));
    expect(store.preset).toBe(null);
    store.applyPreset(preset);
    expect(store.params).toEqual(preset.params);
    expect(store.preset).toBe(name);
    store.params?.stop.push('y'); // the preset's values were copied, not shared
    expect(preset.params.stop).toEqual([]);
    store.set('stop', []);
    await pause();
    expect(backend.saves).toEqual([preset.params]);
  });

  it('resets one field, or all of them', async () => {
    const { store, backend } = await setup(params({ topP: 0.5, minP: 0.2, stop: ['a'] }));
    store.reset('topP');
    expect(store.params?.topP).toBe(DEFAULTS.topP);
    expect(store.changed).toEqual(['minP', 'stop']);
    store.reset('stop');
    expect(store.params?.stop).toEqual([]);
    store.params?.stop.push('b'); // the default's array was copied, not shared
    expect(store.defaults?.stop).toEqual([]);
    store.resetAll();
    expect(store.changed).toEqual([]);
    expect(store.preset).toBe('Balanced');
    await pause();
    expect(backend.saves).toEqual([DEFAULTS]);
  });

  it('keeps where unchecked sampler stages sit, until the order is replaced', async () => {
    const { store } = await setup();
    const layout = [...SAMPLER_STAGES];
    store.setLayout(layout, layout.filter((s) => s !== 'topK'));
    expect(store.layout).toEqual(SAMPLER_STAGES);
    expect(store.params?.samplerOrder).not.toContain('topK');
    store.set('samplerOrder', ['temperature']); // agrees with the layout: nothing moves
    expect(store.layout).toEqual(SAMPLER_STAGES);
    store.set('samplerOrder', ['temperature', 'minP']);
    expect(store.layout.slice(0, 3)).toEqual(['temperature', 'minP', 'penalties']);
    store.reset('samplerOrder');
    expect(store.layout).toEqual(SAMPLER_STAGES);
  });
});

describe('SettingsStore scopes', () => {
  const G = params({ temperature: 0.5 });
  const M = params({ temperature: 0.6 });
  const C = params({ temperature: 0.7 });

  it.each([
    ['no settings anywhere: all chats, at the defaults', {}, CONTEXT, 'global', 'defaults', DEFAULTS],
    ['global settings only', { global: G }, CONTEXT, 'global', 'global', G],
    ['the model has its own', { global: G, model: M }, CONTEXT, 'model', 'model', M],
    ['the chat has its own', { global: G, model: M, chat: C }, CONTEXT, 'chat', 'chat', C],
    ['the chat has its own, nothing broader', { chat: C }, CONTEXT, 'chat', 'chat', C],
    ['no chat selected', { model: M, chat: C }, { chatId: null, modelPath: '/m.gguf' }, 'model', 'model', M],
    ['no model loaded', { model: M }, { chatId: 7, modelPath: null }, 'global', 'defaults', DEFAULTS],
  ] as const)('opens at the scope the values come from: %s', async (_, own, context, scope, source, values) => {
    const { store, backend } = await setup(undefined, own, context);
    expect(store.scope).toBe(scope);
    expect(store.source).toBe(source);
    expect(store.own).toBe(scope === source);
    expect(store.params).toEqual(values);
    // One read, of the most specific scope: the backend says where its values come from.
    expect(vi.mocked(backend.api.getSampling).mock.calls).toEqual([[context.chatId === null ? SCOPES.model : SCOPES.chat]]);
  });

  it.each([
    ['chat', 'model', M],
    ['model', 'global', G],
    ['global', 'global', G],
  ] as const)('selecting %s shows the values it inherits and from where (%s)', async (kind, source, values) => {
    const { store } = await setup(undefined, { global: G, model: kind === 'chat' ? M : undefined });
    await store.selectScope(kind);
    expect(store.scope).toBe(kind);
    expect(store.source).toBe(source);
    expect(store.params).toEqual(values);
  });

  it('editing an inheriting scope gives it its own settings, from the values shown', async () => {
    const { store, backend } = await setup(G);
    await store.selectScope('chat');
    expect(store.own).toBe(false);
    expect(store.source).toBe('global');
    store.set('topP', 0.5);
    expect(store.own).toBe(false); // not until the backend has it
    await pause();
    expect(backend.savedTo).toEqual(['chat']);
    expect(backend.own.chat).toEqual({ ...G, topP: 0.5 });
    expect(backend.own.global).toEqual(G);
    expect(store.own).toBe(true);
    expect(store.source).toBe('chat');
  });

  it('switching scopes saves a waiting edit where it was made first', async () => {
    const { store, backend } = await setup(G);
    store.set('topK', 5);
    await store.selectScope('model');
    expect(backend.savedTo).toEqual(['global']);
    expect(backend.own.global?.topK).toBe(5);
    expect(store.scope).toBe('model');
    expect(store.params?.topK).toBe(5); // the model inherits the global values just saved
    await pause(1000);
    expect(backend.saves).toHaveLength(1); // loading a scope is not an edit
    expect(store.status).toBe('idle');
  });

  it('"This chat" cannot be picked without a chat', async () => {
    const { store, backend } = await setup(G, {}, { chatId: null, modelPath: '/m.gguf' });
    expect(store.available('chat')).toBe(false);
    expect(store.available('model')).toBe(true);
    const calls = vi.mocked(backend.api.getSampling).mock.calls.length;
    await store.selectScope('chat');
    expect(store.scope).toBe('global');
    expect(vi.mocked(backend.api.getSampling).mock.calls.length).toBe(calls);
  });

  it('"Use inherited" drops the scope\'s own settings, and an edit still waiting with them', async () => {
    const { store, backend } = await setup(G, { chat: C });
    expect(store.scope).toBe('chat');
    store.set('topP', 0.1);
    await store.useInherited();
    expect(backend.api.clearSampling).toHaveBeenCalledWith(SCOPES.chat);
    expect(backend.saves).toEqual([]);
    expect(backend.own.chat).toBeUndefined();
    expect(store.scope).toBe('chat');
    expect(store.own).toBe(false);
    expect(store.source).toBe('global');
    expect(store.params).toEqual(G);
    await pause(1000);
    expect(backend.saves).toEqual([]);
  });

  it('"Use inherited" shows why it failed, word for word, and keeps the values', async () => {
    const { store, backend } = await setup(G, { model: M });
    vi.mocked(backend.api.clearSampling).mockRejectedValueOnce({ kind: 'store', message: 'database is locked' });
    await store.useInherited();
    expect(store.scopeError).toBe('database is locked');
    expect(store.own).toBe(true);
    expect(store.params).toEqual(M);
  });

  it('"Use inherited" does nothing for all chats (there is nothing broader)', async () => {
    const { store, backend } = await setup(G);
    await store.useInherited();
    expect(backend.api.clearSampling).not.toHaveBeenCalled();
    expect(store.own).toBe(true);
  });

  it('reopening for another chat starts from that chat\'s scope', async () => {
    const { store, backend } = await setup(G, { chat: C });
    expect(store.scope).toBe('chat');
    const opening = store.open({ chatId: 8, modelPath: '/m.gguf' });
    store.set('topP', 0.1); // racing the switch: chat 7's values must not land on chat 8
    backend.own.chat = undefined; // (the fake has one chat slot: chat 8 has none)
    await opening;
    expect(store.scope).toBe('global');
    expect(store.params).toEqual(G);
    await pause(1000);
    expect(backend.saves).toEqual([]);
  });
});

describe('SettingsStore presets', () => {
  it('saves the values on screen as a user preset, listed after the built-ins and matched', async () => {
    const { store, backend } = await setup(params({ temperature: 0.33 }));
    expect(await store.savePreset('  Terse ')).toBe(true);
    expect(backend.api.savePreset).toHaveBeenCalledWith('  Terse ', params({ temperature: 0.33 }));
    expect(store.presets.map((p) => [p.name, p.builtIn])).toEqual([
      ['Precise', true],
      ['Balanced', true],
      ['Creative', true],
      ['Terse', false],
    ]);
    expect(store.preset).toBe('Terse');
    expect(store.presetError).toBe(null);
  });

  it('shows a refused preset name word for word', async () => {
    const { store } = await setup();
    expect(await store.savePreset('balanced')).toBe(false);
    expect(store.presetError).toBe('choose another name: "balanced" is empty or a built-in preset');
    expect(store.presets).toHaveLength(3);
  });

  it('applies a user preset to the scope being edited, and deletes it', async () => {
    const { store, backend } = await setup(undefined, { chat: params({ topK: 1 }) });
    backend.presets = [{ name: 'Wild', builtIn: false, params: params({ temperature: 2 }) }];
    await store.selectScope('model');
    await store.selectScope('chat');
    store.applyPreset(store.presets[3]);
    await pause();
    expect(backend.savedTo).toEqual(['chat']);
    expect(backend.own.chat?.temperature).toBe(2);
    expect(await store.deletePreset('Wild')).toBe(true);
    expect(backend.api.deletePreset).toHaveBeenCalledWith('Wild');
    expect(store.presets.map((p) => p.name)).toEqual(['Precise', 'Balanced', 'Creative']);
    expect(store.preset).toBe(null);
  });

  it('a failed delete keeps the list and says why', async () => {
    const { store, backend } = await setup();
    vi.mocked(backend.api.deletePreset).mockRejectedValueOnce({ kind: 'store', message: 'disk full' });
    expect(await store.deletePreset('Mine')).toBe(false);
    expect(store.presetError).toBe('disk full');
    expect(store.presets).toHaveLength(3);
  });
});
