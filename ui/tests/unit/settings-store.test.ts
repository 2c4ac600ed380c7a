import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { HearthApi } from '../../src/ipc/client';
import type { SamplingParams } from '../../src/ipc/settings-types';
import { SAVE_DEBOUNCE_MS, SettingsStore } from '../../src/lib/settings.svelte';
import { SAMPLER_STAGES } from '../../src/lib/settings';
import { DEFAULTS, RANGES, params } from './settings-fixtures';

type Deferred = { params: SamplingParams; resolve: () => void; reject: (e: unknown) => void };

/** A backend whose set_sampling answers at once, or (with `hold`) when the test says so. */
function fakeBackend(current: SamplingParams = params()) {
  const held: Deferred[] = [];
  const backend = {
    hold: false,
    /** The next set_sampling calls reject with these (FIFO). */
    rejections: [] as unknown[],
    held,
    saves: [] as SamplingParams[],
    api: {
      getSampling: vi.fn(async () => ({ current: structuredClone(current), defaults: params(), ranges: RANGES })),
      setSampling: vi.fn((p: SamplingParams) => {
        backend.saves.push(structuredClone(p));
        if (backend.hold) {
          return new Promise<SamplingParams>((resolve, reject) => held.push({ params: p, resolve: () => resolve(p), reject }));
        }
        const rejection = backend.rejections.shift();
        return rejection ? Promise.reject(rejection) : Promise.resolve(p);
      }),
    } as unknown as HearthApi,
  };
  return backend;
}

async function setup(current?: SamplingParams) {
  const backend = fakeBackend(current);
  const store = new SettingsStore(backend.api);
  await store.load();
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
  });

  it('reports a failed load', async () => {
    const backend = fakeBackend();
    vi.mocked(backend.api.getSampling).mockRejectedValueOnce({ kind: 'store', message: 'Could not read the settings.' });
    const store = new SettingsStore(backend.api);
    await store.load();
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

  it('shows the backend rejection, names its field, and clears it once a save succeeds', async () => {
    const { store, backend } = await setup();
    backend.rejections.push({ kind: 'invalidInput', message: 'topP must be between 0 and 1, got 2' });
    store.set('topP', 2);
    await pause();
    expect(store.status).toBe('rejected');
    expect(store.error).toBe('topP must be between 0 and 1, got 2');
    expect(store.errorKey).toBe('topP');
    expect(store.params?.topP).toBe(2); // the value stays on screen to be fixed

    store.set('topP', 0.8);
    expect(store.error).not.toBe(null); // still shown until the fix is saved
    await pause();
    expect(backend.saves.at(-1)?.topP).toBe(0.8);
    expect(store.status).toBe('saved');
    expect(store.error).toBe(null);
    expect(store.errorKey).toBe(null);
  });

  it('does not send an unfinished grammar and says what is missing', async () => {
    const { store, backend } = await setup();
    store.set('constraint', { kind: 'gbnf', source: '' });
    await pause();
    expect(backend.saves).toEqual([]);
    expect(store.status).toBe('unfinished');
    expect(store.error).toBe('Write a GBNF grammar, or set Grammar to None.');
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
    backend.held[0].reject({ kind: 'invalidInput', message: 'topP must be between 0 and 1, got 2' });
    await vi.advanceTimersByTimeAsync(0);
    expect(store.error).toBe(null);
    expect(store.status).toBe('pending');
    await pause();
    backend.held[1].resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(store.status).toBe('saved');
    expect(store.error).toBe(null);
  });

  it.each([
    ['precise', { temperature: 0.2, topP: 0.9, topK: 40, minP: 0.05, repeatPenalty: 1.05 }],
    ['balanced', {}],
    ['creative', { temperature: 1.1, topP: 0.98, minP: 0.02, topK: 0, xtcProbability: 0.5, xtcThreshold: 0.1, dryMultiplier: 0.8 }],
  ] as const)('applies the %s preset over the defaults and saves it', async (name, values) => {
    const { store, backend } = await setup(params({ seed: 7, stop: ['x'], temperature: 1.9 }));
    store.applyPreset(name);
    expect(store.params).toEqual(params(values));
    expect(store.preset).toBe(name);
    await pause();
    expect(backend.saves).toEqual([params(values)]);
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
    expect(store.preset).toBe('balanced');
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
