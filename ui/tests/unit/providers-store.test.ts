import { describe, expect, it, vi } from 'vitest';
import type { FieldSupport, KeyStorage, ModelTarget, ProviderConfig, ProviderView, RemoteModel } from '../../src/ipc/bindings';
import { ModelCatalog } from '../../src/lib/model-catalog.svelte';
import { ProvidersStore } from '../../src/lib/providers.svelte';
import { SamplingSupport } from '../../src/lib/sampling-support.svelte';
import { fakeApi } from './helpers';

const config = (id: string, over: Partial<ProviderConfig> = {}): ProviderConfig => ({
  id,
  name: id.toUpperCase(),
  kind: 'openAiCompatible',
  baseUrl: 'http://127.0.0.1:8080/v1',
  models: [],
  contextLength: null,
  extensions: true,
  tokenizerRepo: null,
  allowPlainHttp: false,
  ...over,
});
const view = (c: ProviderConfig, key: KeyStorage | null = null): ProviderView => ({ config: c, key });
const NO_KEY = { kind: 'providerAuth', message: 'OpenAI needs an API key: add it in Settings → Providers' };

/** A backend with providers `views`; `refuse` makes the named command reject with that error once. */
function providersBackend(views: ProviderView[]) {
  const saved = structuredClone(views);
  const refuse: Record<string, unknown> = {};
  const fail = <T>(cmd: string, run: () => T) =>
    vi.fn(async (..._args: unknown[]) => {
      if (cmd in refuse) {
        const error = refuse[cmd];
        delete refuse[cmd];
        throw error;
      }
      return run();
    });
  const api = fakeApi('the providers store', {
    listProviders: fail('listProviders', () => structuredClone(saved)),
    saveProvider: vi.fn(async (c: ProviderConfig) => {
      if (c.name === '') throw { kind: 'invalidInput', message: 'give the provider a name' };
      const at = saved.findIndex((v) => v.config.id === c.id);
      const next = view(c, at >= 0 ? saved[at].key : null);
      if (at >= 0) saved[at] = next;
      else saved.push(next);
      return structuredClone(next);
    }),
    setApiKey: fail('setApiKey', () => ({ kind: 'keychain' }) as KeyStorage),
    deleteProvider: fail('deleteProvider', () => null),
    testProvider: fail('testProvider', () => ({ models: [{ id: 'm', contextLength: null }], latencyMs: 12 })),
  });
  return { api, saved, refuse };
}

describe('ProvidersStore', () => {
  it('lists the providers; a card being added keeps its place and key across a reload', async () => {
    const { api } = providersBackend([view(config('openai'))]);
    const store = new ProvidersStore(api);
    await store.load();
    expect(store.loaded).toBe(true);
    expect(store.entries.map((e) => e.key)).toEqual(['openai']);

    const draft = store.addDraft();
    expect(draft).toBe('new:1');
    await store.load();
    expect(store.entries.map((e) => [e.key, e.view?.config.id ?? null])).toEqual([['openai', 'openai'], ['new:1', null]]);

    // Saved, the draft's card shows the provider under the same key, also after reading the list again.
    await store.save(draft, config('local-1'), '');
    await store.load();
    expect(store.entries.map((e) => [e.key, e.view?.config.id ?? null])).toEqual([['openai', 'openai'], ['new:1', 'local-1']]);
    expect(store.views.map((v) => v.config.id)).toEqual(['openai', 'local-1']);
    expect(store.config('local-1')?.name).toBe('LOCAL-1');
    expect(store.config('gone')).toBeNull();
  });

  it('saves the config, then the key typed; says where the key went and counts the change', async () => {
    const { api } = providersBackend([view(config('openai', { kind: 'openAi' }))]);
    const store = new ProvidersStore(api);
    await store.load();
    const before = store.revision;
    const result = await store.save('openai', config('openai', { kind: 'openAi', name: 'Work' }), ' sk-123 ');
    expect(api.saveProvider).toHaveBeenCalledWith(config('openai', { kind: 'openAi', name: 'Work' }));
    expect(api.setApiKey).toHaveBeenCalledWith('openai', ' sk-123 ');
    expect(result).toEqual({ ok: true, value: view(config('openai', { kind: 'openAi', name: 'Work' }), { kind: 'keychain' }) });
    expect(store.entries[0].view?.key).toEqual({ kind: 'keychain' });
    expect(store.revision).toBe(before + 1);

    await store.save('openai', config('openai', { kind: 'openAi' }), '');
    expect(api.setApiKey).toHaveBeenCalledTimes(1); // no key typed: the saved one stays
  });

  it('says in words what was not saved', async () => {
    const { api, refuse } = providersBackend([view(config('openai'))]);
    const store = new ProvidersStore(api);
    await store.load();
    expect(await store.save('openai', config('openai', { name: '' }), '')).toEqual({ ok: false, error: 'give the provider a name' });
    refuse.setApiKey = { kind: 'keychain', message: 'the keychain refused the key: locked' };
    expect(await store.save('openai', config('openai'), 'sk')).toEqual({
      ok: false,
      error: 'The settings were saved, but not the key: the keychain refused the key: locked',
    });
    refuse.listProviders = { kind: 'store', message: 'Could not read the settings.' };
    await store.load();
    expect(store.loadError).toBe('Could not read the settings.');
    expect(store.entries).toHaveLength(1); // what was shown stays
  });

  it('forgets a key with an empty one; deletes a saved provider, drops an unsaved card', async () => {
    const { api, refuse } = providersBackend([view(config('a'), { kind: 'keychain' }), view(config('b'))]);
    const store = new ProvidersStore(api);
    await store.load();
    expect(await store.forgetKey('a')).toEqual({ ok: true, value: null });
    expect(api.setApiKey).toHaveBeenCalledWith('a', '');
    expect(store.entries[0].view?.key).toBeNull();

    refuse.deleteProvider = { kind: 'store', message: 'disk full' };
    expect(await store.remove('b')).toEqual({ ok: false, error: 'disk full' });
    expect(store.entries).toHaveLength(2);
    expect(await store.remove('b')).toEqual({ ok: true, value: null });
    expect(api.deleteProvider).toHaveBeenLastCalledWith('b');

    const draft = store.addDraft();
    await store.remove(draft);
    expect(api.deleteProvider).toHaveBeenCalledTimes(2);
    expect(store.entries.map((e) => e.key)).toEqual(['a']);
  });

  it('tests the connection with the saved settings', async () => {
    const { api, refuse } = providersBackend([view(config('a'))]);
    const store = new ProvidersStore(api);
    expect(await store.test('a')).toEqual({ ok: true, value: { models: [{ id: 'm', contextLength: null }], latencyMs: 12 } });
    refuse.testProvider = { kind: 'network', message: 'could not reach A at http://127.0.0.1:8080/v1: connection refused.' };
    expect(await store.test('a')).toEqual({ ok: false, error: 'could not reach A at http://127.0.0.1:8080/v1: connection refused.' });
  });
});

describe('ModelCatalog', () => {
  it('lists each provider as it answers; a failure says why and keeps the typed models', async () => {
    let answerSlow: (models: RemoteModel[]) => void = () => {};
    const api = fakeApi('the model catalog', {
      listProviderModels: vi.fn(async (id: string): Promise<RemoteModel[]> => {
        if (id === 'openai') throw NO_KEY;
        if (id === 'slow') return new Promise((r) => (answerSlow = r));
        return [{ id: 'llama', contextLength: null }];
      }),
    });
    const catalog = new ModelCatalog(api);
    const done = catalog.refresh([
      view(config('openai', { kind: 'openAi', models: ['gpt-typed'] })),
      view(config('local')),
      view(config('slow')),
    ]);
    await vi.waitFor(() => expect(catalog.lists.local).toEqual({ status: 'ready', models: ['llama'] }));
    expect(catalog.lists.openai).toEqual({ status: 'failed', error: NO_KEY.message, models: ['gpt-typed'] });
    expect(catalog.lists.slow).toEqual({ status: 'loading' });
    answerSlow([{ id: 'qwen', contextLength: null }]);
    await done;
    expect(catalog.lists.slow).toEqual({ status: 'ready', models: ['qwen'] });
  });

  it('an older answer arriving after a newer one is dropped; the last list shows while reading again', async () => {
    const answers: ((models: RemoteModel[]) => void)[] = [];
    const api = fakeApi('the model catalog', {
      listProviderModels: vi.fn(() => new Promise<RemoteModel[]>((r) => answers.push(r))),
    });
    const catalog = new ModelCatalog(api);
    const providers = [view(config('a'))];
    const first = catalog.refresh(providers);
    const second = catalog.refresh(providers);
    answers[1]([{ id: 'new', contextLength: null }]);
    answers[0]([{ id: 'old', contextLength: null }]);
    await Promise.all([first, second]);
    expect(catalog.lists.a).toEqual({ status: 'ready', models: ['new'] });
    void catalog.refresh(providers);
    expect(catalog.lists.a).toEqual({ status: 'ready', models: ['new'] });
  });
});

describe('SamplingSupport', () => {
  const OPENAI: ModelTarget = { kind: 'remote', provider: 'openai', model: 'gpt-4o-mini' };
  const fields: FieldSupport[] = [
    { field: 'temperature', supported: true, note: '' },
    { field: 'topK', supported: false, note: "OpenAI (OpenAI's Chat Completions API) has no such setting; it is not sent" },
    { field: 'stop', supported: true, note: 'OpenAI takes at most 4 stop strings' },
  ];

  it("reads which settings reach the chat's model, and names the provider they are not sent to", async () => {
    const api = fakeApi('sampling support', { samplingSupportFor: vi.fn(async () => structuredClone(fields)) });
    const support = new SamplingSupport(api);
    await support.load(OPENAI, 'OpenAI');
    expect(api.samplingSupportFor).toHaveBeenCalledWith(OPENAI);
    expect(support.provider).toBe('OpenAI');
    expect(support.unsupported).toBe(1);
    expect(support.of('topK')?.supported).toBe(false);
    expect(support.of('stop')?.note).toBe('OpenAI takes at most 4 stop strings');
    expect(support.of('nCtx')).toBeUndefined();
    await support.load({ kind: 'local', model: null }, null);
    expect(support.provider).toBeNull();
  });

  it('a failure greys nothing out and says why; a late answer for an older target is dropped', async () => {
    const pending: ((f: FieldSupport[]) => void)[] = [];
    const api = fakeApi('sampling support', {
      samplingSupportFor: vi.fn((target: ModelTarget) =>
        target.kind === 'local' ? Promise.reject({ kind: 'provider', message: 'no provider' }) : new Promise<FieldSupport[]>((r) => pending.push(r)),
      ),
    });
    const support = new SamplingSupport(api);
    const old = support.load(OPENAI, 'OpenAI');
    await support.load({ kind: 'local', model: null }, null);
    expect(support.error).toBe('no provider');
    pending[0](fields);
    await old;
    expect(support.fields).toEqual([]);
    expect(support.unsupported).toBe(0);
  });
});
