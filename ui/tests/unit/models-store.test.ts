import { describe, expect, it, vi } from 'vitest';
import type { Download, FitEstimate, HubTokenStatus, LibraryModel, ModelFacts, ModelInfo, RepoQuant } from '../../src/ipc/bindings';
import { DownloadsStore } from '../../src/lib/downloads.svelte';
import { HubStore, quantKey } from '../../src/lib/hub.svelte';
import { LibraryStore } from '../../src/lib/library.svelte';
import { CONTRACT } from '../contract.mjs';
import { fakeApi } from './helpers';
import { FACTS } from './library-fixtures';

const download = (id: string, over: Partial<Download> = {}): Download => ({
  id,
  repo: 'HuggingFaceTB/SmolLM2-135M-Instruct-GGUF',
  quant: 'Q8_0',
  files: ['smollm2-135m-instruct-q8_0.gguf'],
  state: 'running',
  doneBytes: 10,
  totalBytes: 100,
  bytesPerSecond: 5,
  etaSeconds: 18,
  attempt: 1,
  maxAttempts: 8,
  retryInS: null,
  error: null,
  modelPath: null,
  ...over,
});

/** A promise and its resolve, for answers that arrive when the test says. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('DownloadsStore', () => {
  it('watches first, then lists; an update seen meanwhile wins over the listed one', async () => {
    let send: (d: Download) => void = () => {};
    const listed = deferred<Download[]>();
    const api = fakeApi('the downloads store', {
      watchDownloads: vi.fn(async (onUpdate: (d: Download) => void) => {
        send = onUpdate;
        return null;
      }),
      listDownloads: vi.fn(() => listed.promise),
    });
    const store = new DownloadsStore(api);
    const watching = store.watch();
    await vi.waitFor(() => expect(api.listDownloads).toHaveBeenCalled());
    send(download('a', { doneBytes: 50 }));
    listed.resolve([download('a', { doneBytes: 20 }), download('b', { state: 'paused' }), download('c', { state: 'done' })]);
    await watching;
    expect(store.items.map((d) => [d.id, d.doneBytes])).toEqual([['a', 50], ['b', 10], ['c', 10]]);
    expect(store.active).toBe(2);
    await store.watch();
    expect(api.watchDownloads).toHaveBeenCalledTimes(1);
  });

  it('says why the downloads could not be read', async () => {
    const api = fakeApi('the downloads store', {
      watchDownloads: async () => null,
      listDownloads: async () => Promise.reject({ kind: 'store', message: 'the downloads file is damaged' }),
    });
    const store = new DownloadsStore(api);
    await store.watch();
    expect(store.loadError).toBe('the downloads file is damaged');
  });

  it('puts new downloads first, tells once when one is done, counts a retry down from when it was told', async () => {
    let send: (d: Download) => void = () => {};
    const done = vi.fn();
    let now = 1_000;
    const api = fakeApi('the downloads store', {
      watchDownloads: async (onUpdate) => {
        send = onUpdate;
        return null;
      },
      listDownloads: async () => [download('old', { state: 'done' })],
    });
    const store = new DownloadsStore(api, done, () => now);
    await store.watch();
    send(download('new'));
    expect(store.items.map((d) => d.id)).toEqual(['new', 'old']);
    send(download('new', { state: 'retrying', retryInS: 4, attempt: 2 }));
    expect(store.retryAt.new).toBe(5_000);
    now = 2_000;
    send(download('new', { state: 'running' }));
    expect(store.retryAt.new).toBeUndefined();
    send(download('new', { state: 'done', modelPath: '/m.gguf' }));
    send(download('new', { state: 'done', modelPath: '/m.gguf' }));
    expect(done).toHaveBeenCalledTimes(1);
    expect(done.mock.calls[0][0].modelPath).toBe('/m.gguf');
    expect(store.active).toBe(0);
  });

  it('starts, pauses, resumes; a refused action is said on its download', async () => {
    const api = fakeApi('the downloads store', {
      watchDownloads: async () => null,
      listDownloads: async () => [],
      startDownload: vi.fn(async (repo: string, quant: string, files: string[]) => download('d1', { repo, quant, files, state: 'queued' })),
      pauseDownload: vi.fn(async (id: string) => download(id, { state: 'paused' })),
      resumeDownload: vi.fn(async () => Promise.reject({ kind: 'diskFull', message: 'the disk is still full' })),
    });
    const store = new DownloadsStore(api);
    await store.watch();
    const started = await store.download('r/x', 'Q4_0', ['x.gguf']);
    expect(started.ok).toBe(true);
    expect(store.underway('r/x', 'Q4_0')?.id).toBe('d1');
    await store.pause('d1');
    expect(store.get('d1')?.state).toBe('paused');
    await store.resume('d1');
    expect(store.errors.d1).toBe('the disk is still full');
    expect(store.working.d1).toBeUndefined();
  });

  it('a download that cannot start says why; cancel shows it cancelled until the channel says so', async () => {
    const api = fakeApi('the downloads store', {
      watchDownloads: async () => null,
      listDownloads: async () => [download('d1', { state: 'failed', error: 'the disk is full' })],
      startDownload: async () => Promise.reject({ kind: 'diskFull', message: 'not enough disk space' }),
      cancelDownload: vi.fn(async () => null),
    });
    const store = new DownloadsStore(api);
    await store.watch();
    expect(await store.download('r/x', 'F16', ['x.gguf'])).toEqual({ ok: false, error: 'not enough disk space' });
    await store.cancel('d1');
    expect(api.cancelDownload).toHaveBeenCalledWith('d1');
    expect(store.get('d1')?.state).toBe('cancelled');
  });
});

const facts = (over: Partial<ModelFacts> = {}): ModelFacts => ({ ...FACTS, ...over });
const model = (path: string, over: Partial<LibraryModel> = {}): LibraryModel => ({
  path,
  name: path.split('/').at(-1)!.replace('.gguf', ''),
  source: 'hubCache',
  repo: null,
  sizeBytes: 1e9,
  facts: facts(),
  error: null,
  loaded: false,
  ...over,
});
const info = (path: string): ModelInfo => ({ name: path, path, sizeBytes: 1 }) as ModelInfo;

/** A library backend: `files` listed, loads reporting progress, imports added. */
function libraryBackend(files: LibraryModel[]) {
  let loaded = files.find((m) => m.loaded)?.path ?? null;
  const listed = () => files.map((m) => ({ ...m, loaded: m.path === loaded }));
  const api = fakeApi('the library store', {
    listLibrary: vi.fn(async () => listed()),
    loadModel: vi.fn(async (path: string, onProgress: (f: number) => void) => {
      onProgress(0);
      onProgress(0.5);
      if (path.includes('oom')) throw { kind: 'engine', message: 'out of memory' };
      onProgress(0.4); // never backwards
      onProgress(1);
      loaded = path;
      return info(path);
    }),
    unloadModel: vi.fn(async () => {
      loaded = null;
      return null;
    }),
    deleteModel: vi.fn(async (path: string) => {
      files = files.filter((m) => m.path !== path);
      if (loaded === path) loaded = null;
      return null;
    }),
    revealModel: vi.fn(async () => Promise.reject({ kind: 'file', message: 'no file manager answered' })),
    importModel: vi.fn(async (path: string, mode: 'copy' | 'link') => {
      if (path.includes('bad')) throw { kind: 'invalidInput', message: 'bad.gguf is not a GGUF file' };
      const m = model(mode === 'copy' ? `/models/${path.split('/').at(-1)}` : path, { source: mode === 'copy' ? 'copied' : 'linked' });
      files.push(m);
      return m;
    }),
    importModelDialog: vi.fn(async () => null),
  });
  return api;
}

describe('LibraryStore', () => {
  it('loads with progress that only grows; the loaded flag moves; the header is told', async () => {
    const api = libraryBackend([model('/a.gguf', { loaded: true }), model('/b.gguf')]);
    const changed = vi.fn();
    const store = new LibraryStore(api, changed);
    await store.refresh();
    expect(store.loadedPath).toBe('/a.gguf');
    const seen: number[] = [];
    // The backend's load (0, 0.5, 0.4, 1), the fraction on show read after each report.
    const load = vi.mocked(api.loadModel);
    const backendLoad = load.getMockImplementation()!;
    load.mockImplementationOnce((path, onProgress) =>
      backendLoad(path, (f) => {
        onProgress(f);
        seen.push(store.loading!.fraction);
      }),
    );
    expect(await store.load('/b.gguf')).toBe(true);
    expect(seen).toEqual([0, 0.5, 0.5, 1]);
    expect(store.loading).toBeNull();
    expect(store.loadedPath).toBe('/b.gguf');
    expect(changed).toHaveBeenCalled();
  });

  it('a failed load says why on its row and leaves the loaded model as it was', async () => {
    const store = new LibraryStore(libraryBackend([model('/a.gguf', { loaded: true }), model('/oom.gguf')]));
    await store.refresh();
    expect(await store.load('/oom.gguf')).toBe(false);
    expect(store.errors['/oom.gguf']).toEqual({ action: 'load', message: 'out of memory', kind: 'engine' });
    expect(store.loadedPath).toBe('/a.gguf');
    // Loading another file leaves that row's message as it was.
    expect(await store.load('/a.gguf')).toBe(true);
    expect(store.errors['/oom.gguf']).toEqual({ action: 'load', message: 'out of memory', kind: 'engine' });
  });

  it('one load at a time', async () => {
    const api = libraryBackend([model('/a.gguf'), model('/b.gguf')]);
    const gate = deferred<ModelInfo>();
    (api.loadModel as ReturnType<typeof vi.fn>).mockImplementationOnce(() => gate.promise);
    const store = new LibraryStore(api);
    await store.refresh();
    const first = store.load('/a.gguf');
    expect(await store.load('/b.gguf')).toBe(false);
    gate.resolve(info('/a.gguf'));
    expect(await first).toBe(true);
    expect(api.loadModel).toHaveBeenCalledTimes(1);
  });

  it('unloads; deletes (the header told when it was the loaded one); a failed reveal is said on the row', async () => {
    const api = libraryBackend([model('/a.gguf', { loaded: true }), model('/b.gguf')]);
    const changed = vi.fn();
    const store = new LibraryStore(api, changed);
    await store.refresh();
    await store.unload();
    expect(store.loadedPath).toBeNull();
    expect(changed).toHaveBeenCalledTimes(1);
    await store.load('/b.gguf');
    changed.mockClear();
    await store.remove('/b.gguf');
    expect(store.models.map((m) => m.path)).toEqual(['/a.gguf']);
    expect(changed).toHaveBeenCalledTimes(1);
    await store.reveal('/a.gguf');
    expect(store.errors['/a.gguf']).toMatchObject({ action: 'reveal', message: 'no file manager answered' });
  });

  it('imports dropped files: .gguf ones in turn, the rest named; the library is read again', async () => {
    const api = libraryBackend([]);
    const store = new LibraryStore(api);
    await store.importPaths(['/d/one.gguf', '/d/notes.txt', '/d/bad.gguf'], 'copy');
    expect(api.importModel).toHaveBeenCalledWith('/d/one.gguf', 'copy');
    expect(api.importModel).toHaveBeenCalledWith('/d/bad.gguf', 'copy');
    expect(store.importNotice).toEqual({
      tone: 'error',
      text: 'Imported one. bad.gguf was not imported: bad.gguf is not a GGUF file. Only .gguf files can be imported: notes.txt was skipped.',
    });
    expect(store.models.map((m) => [m.path, m.source])).toEqual([['/models/one.gguf', 'copied']]);
  });

  it('a cancelled dialog says nothing; a refused file is said', async () => {
    const api = libraryBackend([]);
    const store = new LibraryStore(api);
    await store.importDialog('link');
    expect(api.importModelDialog).toHaveBeenCalledWith('link');
    expect(store.importNotice).toBeNull();
    (api.importModelDialog as ReturnType<typeof vi.fn>).mockRejectedValueOnce({ kind: 'invalidInput', message: 'x.gguf is not a GGUF file' });
    await store.importDialog('link');
    expect(store.importNotice).toEqual({ tone: 'error', text: 'Not imported: x.gguf is not a GGUF file' });
    expect(store.importing).toBe(false);
  });

  it('an older list arriving late is dropped', async () => {
    const first = deferred<LibraryModel[]>();
    const api = fakeApi('the library store', {
      listLibrary: vi.fn().mockReturnValueOnce(first.promise).mockResolvedValueOnce([model('/new.gguf')]),
    });
    const store = new LibraryStore(api);
    const older = store.refresh();
    await store.refresh();
    first.resolve([model('/old.gguf')]);
    await older;
    expect(store.models.map((m) => m.path)).toEqual(['/new.gguf']);
  });
});

const quant = (q: string, files = [`${q}.gguf`]): RepoQuant => ({ quant: q, files, projector: null, sizeBytes: 1e9 });
const estimate = (contextLength: number, over: Partial<FitEstimate> = {}): FitEstimate => ({
  facts: facts(),
  contextLength,
  weightsBytes: 1e9,
  kvCacheBytes: 1e8,
  computeBytes: 1e8,
  totalBytes: 1.2e9,
  freeRamBytes: 8e9,
  freeVramBytes: null,
  verdict: { kind: 'fits' },
  ...over,
});
const GATED = { kind: 'hubAuth', message: 'r/gated is gated: add your Hugging Face token' };

describe('HubStore', () => {
  it('keeps the answer to the latest search only', async () => {
    const slow = deferred<never[]>();
    const api = fakeApi('the hub store', {
      hubSearch: vi.fn().mockReturnValueOnce(slow.promise).mockResolvedValueOnce([{ id: 'r/new', downloads: 1, likes: 0, updatedAt: null, gated: false }]),
    });
    const hub = new HubStore(api);
    const first = hub.search('old');
    await hub.search('  new ');
    slow.resolve([]);
    await first;
    expect(hub.searched).toBe('new');
    expect(hub.results.map((r) => r.id)).toEqual(['r/new']);
    expect(hub.searching).toBe(false);
    expect(api.hubSearch).toHaveBeenLastCalledWith('new');
  });

  it('opens a repository (its files read once, sorted), closes it; a refusal keeps its kind', async () => {
    const api = fakeApi('the hub store', {
      hubRepoFiles: vi.fn(async (repo: string) => {
        if (repo === 'r/gated') throw GATED;
        return [quant('Q8_0'), quant('Q4_K_M')];
      }),
    });
    const hub = new HubStore(api);
    await hub.toggle('r/open');
    expect(hub.openRepo).toBe('r/open');
    const files = hub.files['r/open'];
    expect(files.status === 'ready' && files.quants.map((q) => q.quant)).toEqual(['Q4_K_M', 'Q8_0']);
    await hub.toggle('r/open');
    expect(hub.openRepo).toBeNull();
    await hub.toggle('r/open');
    expect(api.hubRepoFiles).toHaveBeenCalledTimes(1);
    await hub.toggle('r/gated');
    expect(hub.files['r/gated']).toEqual({ status: 'failed', error: { message: GATED.message, kind: 'hubAuth' } });
  });

  it('a saved token reads again the repositories refused for want of one', async () => {
    let token: string | null = null;
    const status = (): HubTokenStatus => ({ stored: token !== null, storage: { kind: 'keychain' } });
    const api = fakeApi('the hub store', {
      hubRepoFiles: vi.fn(async () => {
        if (!token) throw GATED;
        return [quant('Q4_K_M')];
      }),
      setHubToken: vi.fn(async (t: string | null) => {
        if (t === 'hf_wrong') throw { kind: 'hubAuth', message: 'Hugging Face refused the token' };
        token = t;
        return status();
      }),
      hubTokenStatus: async () => status(),
    });
    const hub = new HubStore(api);
    await hub.refreshToken();
    expect(hub.token).toEqual({ stored: false, storage: { kind: 'keychain' } });
    await hub.toggle('r/gated');
    expect(await hub.setToken('hf_wrong')).toEqual({ ok: false, error: 'Hugging Face refused the token' });
    expect(hub.files['r/gated'].status).toBe('failed');
    expect(await hub.setToken('hf_good')).toMatchObject({ ok: true });
    expect(hub.files['r/gated'].status).toBe('ready');
    expect(hub.token?.stored).toBe(true);
  });

  it("checks a fit at the model's own context, asking again when the backend chose another", async () => {
    const api = fakeApi('the hub store', {
      hubFit: vi.fn(async (_repo: string, _file: string, ctx: number | null) => estimate(ctx ?? 2048)),
    });
    const hub = new HubStore(api);
    const q = quant('Q4_K_M', ['part-1.gguf', 'part-2.gguf']);
    await hub.checkFit('r/x', q);
    expect(api.hubFit).toHaveBeenNthCalledWith(1, 'r/x', 'part-1.gguf', null);
    expect(api.hubFit).toHaveBeenNthCalledWith(2, 'r/x', 'part-1.gguf', 8192);
    const key = quantKey('r/x', 'Q4_K_M');
    expect(hub.contexts[key]).toBe(8192);
    expect(hub.fits[key]).toMatchObject({ status: 'done', estimate: { contextLength: 8192 } });
    // Checking again keeps the context chosen; another one is asked for as given.
    await hub.checkFit('r/x', q);
    expect(api.hubFit).toHaveBeenLastCalledWith('r/x', 'part-1.gguf', 8192);
    await hub.checkFit('r/x', q, 4096);
    expect(hub.contexts[key]).toBe(4096);
    expect(api.hubFit).toHaveBeenCalledTimes(4);
  });

  it('without a context in the header, the one the backend assumes; one answer is enough when it matches', async () => {
    const assumed = CONTRACT.fitContextFallback;
    const api = fakeApi('the hub store', {
      hubFit: vi.fn(async (_r: string, _f: string, ctx: number | null) => ({ ...estimate(ctx ?? assumed), facts: facts({ contextLength: null }) })),
    });
    const hub = new HubStore(api);
    await hub.checkFit('r/x', quant('Q4_0'));
    expect(api.hubFit).toHaveBeenCalledTimes(1);
    expect(hub.contexts[quantKey('r/x', 'Q4_0')]).toBe(assumed);
  });

  it('keeps the last estimate on show while checking and after a failure; a late answer is dropped', async () => {
    const late = deferred<FitEstimate>();
    const api = fakeApi('the hub store', {
      hubFit: vi
        .fn()
        .mockResolvedValueOnce(estimate(8192))
        .mockReturnValueOnce(late.promise)
        .mockRejectedValueOnce({ kind: 'network', message: 'huggingface.co did not answer' }),
    });
    const hub = new HubStore(api);
    const q = quant('Q4_0');
    const key = quantKey('r/x', 'Q4_0');
    await hub.checkFit('r/x', q);
    const slow = hub.checkFit('r/x', q, 2048);
    expect(hub.fits[key]).toMatchObject({ status: 'checking', estimate: { contextLength: 8192 } });
    await hub.checkFit('r/x', q, 1024);
    expect(hub.fits[key]).toEqual({
      status: 'failed',
      error: { message: 'huggingface.co did not answer', kind: 'network' },
      estimate: estimate(8192),
    });
    late.resolve(estimate(2048));
    await slow;
    expect(hub.fits[key].status).toBe('failed');
  });
});
