import { describe, expect, it, vi } from 'vitest';
import type { ChatSummary, ModelInfo, ModelLoading, ModelTarget } from '../../src/ipc/bindings';
import { ChatStore } from '../../src/lib/chat.svelte';
import { ChatModelStore } from '../../src/lib/chat-model.svelte';
import { LibraryStore } from '../../src/lib/library.svelte';
import { fakeApi, manualFrames } from './helpers';
import { libraryModel } from './library-fixtures';

const A = '/m/llama-8b.gguf';
const B = '/m/llama-1b.gguf';
const GONE = '/m/gone-7b.gguf';
/** What the backend calls each file. */
const NAMES: Record<string, string> = { [A]: 'llama-8b', [B]: 'llama-1b', [GONE]: 'gone-7b' };
const info = (path: string): ModelInfo => ({ name: NAMES[path], path, sizeBytes: 1 }) as ModelInfo;
const goneWords = (path: string) => `this chat talks to ${NAMES[path]}, whose file is gone (${path}); pick another model for it with the model button`;
const local = (model: string | null): ModelTarget => ({ kind: 'local', model });
const chat = (id: number, model: ModelTarget): ChatSummary => ({
  id,
  title: `Chat ${id}`,
  updatedAt: id,
  pinned: false,
  systemPrompt: '',
  model,
  modelName: model.kind === 'local' && model.model ? NAMES[model.model] : null,
});

/**
 * The backend's side of chats' models (hearth-app's chat_model.rs): files A and B exist, A is loaded; a
 * load reports 0 and 0.5, waits while `hold` is set until `release()`, then reports 1.
 */
function fakeBackend(chats: ChatSummary[]) {
  const backend = {
    loaded: A as string | null,
    hold: false,
    gates: [] as (() => void)[],
    release: () => backend.gates.shift()?.(),
    /** The windows watching the loaded model (watch_model). */
    watchers: [] as ((model: ModelInfo | null) => void)[],
    /** The idle timer ran out: the model leaves memory, and the watchers are told. */
    unloadIdle: () => {
      backend.loaded = null;
      backend.watchers.forEach((tell) => tell(null));
    },
  };
  const files = [A, B];
  async function loadFile(path: string, onProgress: (f: number) => void): Promise<ModelInfo> {
    onProgress(0);
    onProgress(0.5);
    if (backend.hold) await new Promise<void>((r) => backend.gates.push(r));
    onProgress(1);
    backend.loaded = path;
    return info(path);
  }
  async function ready(chatId: number, onProgress: (load: ModelLoading) => void): Promise<ModelInfo | null> {
    const target = chats.find((c) => c.id === chatId)!.model;
    if (target.kind !== 'local') return null;
    if (target.model !== null && !files.includes(target.model)) throw { kind: 'file', message: goneWords(target.model) };
    const wanted = target.model ?? backend.loaded;
    if (wanted === null || wanted === backend.loaded) return null;
    return loadFile(wanted, (fraction) => onProgress({ path: wanted, name: NAMES[wanted], fraction }));
  }
  const api = fakeApi('the chat model store', {
    listChats: vi.fn(async () => chats.map((c) => ({ ...c }))),
    activeModel: vi.fn(async () => (backend.loaded ? info(backend.loaded) : null)),
    loadChatModel: vi.fn(ready),
    useLocalModel: vi.fn(async (chatId: number, path: string, onProgress: (f: number) => void) => {
      if (!files.includes(path)) throw { kind: 'file', message: `there is no model file at ${path}` };
      const found = chats.find((c) => c.id === chatId)!;
      found.model = local(path);
      return { chat: { ...found }, loaded: await ready(chatId, (load) => onProgress(load.fraction)) };
    }),
    loadModel: vi.fn(loadFile),
    onModelChanged: vi.fn(async (tell: (model: ModelInfo | null) => void) => {
      backend.watchers.push(tell);
      return () => (backend.watchers = backend.watchers.filter((w) => w !== tell));
    }),
  });
  return Object.assign(backend, { api });
}

const settle = () => new Promise((r) => setTimeout(r, 0));

/** Chat 1 talks to A (loaded), 2 to B, 3 to a file that is gone, 4 to a provider; chat `open` is on show. */
function setup(open: number | null = 1) {
  const list = [chat(1, local(A)), chat(2, local(B)), chat(3, local(GONE)), chat(4, { kind: 'remote', provider: 'openai', model: 'gpt-4o' })];
  const backend = fakeBackend(list);
  const chats = new ChatStore(backend.api, manualFrames().frames);
  chats.chats = list.map((c) => ({ ...c }));
  chats.model = info(A);
  chats.activeChatId = open;
  const library = new LibraryStore(backend.api, () => void chats.refreshModel());
  const store = new ChatModelStore(backend.api, chats, library);
  /** The chats whose model was asked for, in order. */
  const asked = () => vi.mocked(backend.api.loadChatModel).mock.calls.map(([id]) => id);
  return { backend, chats, library, store, asked };
}

describe('ChatModelStore: a chat opened', () => {
  it("loads the chat's model when another is loaded, its progress shown for that chat", async () => {
    const { backend, chats, library, store } = setup(2);
    backend.hold = true;
    const opening = store.opened(2);
    await settle();
    expect(library.loading).toEqual({ path: B, name: 'llama-1b', chatId: 2, fraction: 0.5 });
    backend.release();
    await opening;
    expect(library.loading).toBeNull();
    expect(chats.model?.path).toBe(B);
    expect(chats.error).toBeNull();
    expect(store.problems).toEqual({});
  });

  it('asks the backend even when its model is loaded, and shows nothing when nothing loads', async () => {
    const { backend, library, store, asked } = setup(1);
    let shown: unknown = 'not asked';
    vi.mocked(backend.api.loadChatModel).mockImplementationOnce(async () => {
      shown = library.loading;
      return null;
    });
    await store.opened(1);
    expect(asked()).toEqual([1]);
    expect(shown).toBeNull();
    expect(backend.api.activeModel).not.toHaveBeenCalled();
  });

  it('a file that is gone: words in the banner and on the chat; the loaded model stays; a model picked clears them', async () => {
    const { chats, store } = setup(3);
    await store.opened(3);
    expect(chats.error).toBe(goneWords(GONE));
    expect(chats.errorKind).toBe('file');
    expect(store.problems).toEqual({ 3: goneWords(GONE) });
    expect(chats.model?.path).toBe(A);

    expect(await store.use(3, B)).toBe(true);
    expect(store.problems).toEqual({});
    expect(chats.chats.find((c) => c.id === 3)?.model).toEqual(local(B));
    expect(chats.model?.path).toBe(B);
  });

  it('the last chat opened wins: opens still waiting are dropped, and the chat on show gets its model', async () => {
    const { backend, chats, store, asked } = setup(2);
    backend.hold = true;
    const first = store.opened(2);
    await settle();
    chats.activeChatId = 1;
    const second = store.opened(1);
    chats.activeChatId = 3;
    const third = store.opened(3);
    backend.release();
    await Promise.all([first, second, third]);
    expect(asked()).toEqual([2, 3]);
    expect(chats.error).toBe(goneWords(GONE));
  });

  it('a failure of a chat no longer on show is not said in the banner', async () => {
    const { chats, store } = setup(3);
    const opening = store.opened(3);
    chats.activeChatId = 1;
    await opening;
    expect(chats.error).toBeNull();
    expect(store.problems[3]).toBe(goneWords(GONE));
  });

  it('nothing is loaded while a reply is written, nor for a remote chat', async () => {
    const { chats, store, asked } = setup(2);
    chats.generating = { chatId: 1, stopping: false };
    await store.opened(2);
    chats.generating = null;
    chats.activeChatId = 4;
    await store.opened(4);
    expect(asked()).toEqual([]);
  });
});

describe('ChatModelStore: before a comparison', () => {
  it('asks the backend, which decides: nothing loads for a loaded model, nor shows', async () => {
    const { library, store, asked } = setup(1);
    await store.ready(1);
    expect(asked()).toEqual([1]);
    expect(library.loading).toBeNull();
  });

  it("a model that is not loaded loads first, shown from the backend's first report (at 0)", async () => {
    const { backend, chats, library, store } = setup(1);
    backend.loaded = null;
    backend.hold = true;
    const ready = store.ready(1);
    await settle();
    expect(library.loading).toEqual({ path: A, name: 'llama-8b', chatId: 1, fraction: 0.5 });
    backend.release();
    await ready;
    expect(backend.loaded).toBe(A);
    expect((chats.model as ModelInfo | null)?.path).toBe(A);
  });

  it('waits for the load of an open under way, then asks again (nothing left to load)', async () => {
    const { backend, store, asked } = setup(2);
    backend.hold = true;
    const opening = store.opened(2);
    const ready = store.ready(2);
    await settle();
    expect(asked()).toEqual([2]);
    backend.release();
    await Promise.all([opening, ready]);
    expect(asked()).toEqual([2, 2]);
    expect(await vi.mocked(backend.api.loadChatModel).mock.results[1].value).toBeNull(); // one load, not two
  });

  it('rejects with why the model cannot be loaded, kept on the chat', async () => {
    const { chats, store } = setup(3);
    await expect(store.ready(3)).rejects.toEqual({ kind: 'file', message: goneWords(GONE) });
    expect(store.problems[3]).toBe(goneWords(GONE));
    expect(chats.error).toBeNull();
  });
});

describe("ChatModelStore: a turn's own load, from its events", () => {
  const loading = (fraction: number): ModelLoading => ({ path: B, name: 'llama-1b', fraction });

  it('shows as the load under way for the chat, named as the backend says; its end reads the loaded model again', async () => {
    const { backend, chats, library, store } = setup(2);
    library.models = [libraryModel(A, 1, { loaded: true }), libraryModel(B, 1)];
    const load = store.turnLoad(2);
    expect(library.loading).toEqual({ path: null, name: null, chatId: 2, fraction: 0 });
    load.progress(loading(0));
    load.progress(loading(0.4));
    expect(library.loading).toEqual({ path: B, name: 'llama-1b', chatId: 2, fraction: 0.4 });
    backend.loaded = B;
    load.end();
    load.end(); // a second end (the turn's terminal event after its userSaved) changes nothing
    expect(library.loading).toBeNull();
    expect(library.loadedPath).toBe(B);
    await settle();
    expect(chats.model?.path).toBe(B);
    expect(vi.mocked(backend.api.activeModel)).toHaveBeenCalledTimes(1);
  });

  it("a failed load says why on the file's row, and the chat keeps it for its model button", () => {
    const { library, store } = setup(2);
    const load = store.turnLoad(2);
    load.progress(loading(0.2));
    const error = { kind: 'engine', message: 'llama-1b is not a model llama.cpp can load', field: 'model' };
    load.end(error);
    store.failed(2, error);
    expect(library.loading).toBeNull();
    expect(library.errors[B]).toEqual({ action: 'load', message: error.message, kind: 'engine' });
    expect(store.problems[2]).toBe(error.message);
  });

  it('Stop gives the load up', async () => {
    const { backend, store } = setup(2);
    const cancel = vi.fn(async () => true);
    Object.assign(backend.api, { cancelLoad: cancel });
    const load = store.turnLoad(2);
    load.progress(loading(0.2));
    await load.cancel();
    expect(cancel).toHaveBeenCalledOnce();
  });
});

describe("ChatModelStore: the backend's own changes of the loaded model", () => {
  it('an idle unload shows at once: no model in the header, none loaded in the library; the next turn loads it at once', async () => {
    const { backend, chats, library, store } = setup(1);
    library.models = [libraryModel(A, 1, { loaded: true }), libraryModel(B, 1)];
    const told: (ModelInfo | null)[] = [];
    await store.watch((model) => told.push(model));
    backend.unloadIdle();
    expect(told).toEqual([null]);
    expect(chats.model).toBeNull();
    expect(library.loadedPath).toBeNull();

    // The chat's next open loads it again, shown from the backend's first report.
    await store.opened(1);
    expect(chats.model?.path).toBe(A);
    expect(library.loadedPath).toBe(A);
  });

  it('a model the backend says is loaded now is the loaded model', async () => {
    const { backend, chats, library, store } = setup(1);
    library.models = [libraryModel(A, 1, { loaded: true }), libraryModel(B, 1)];
    await store.watch();
    backend.watchers.forEach((tell) => tell(info(B)));
    expect(chats.model?.path).toBe(B);
    expect(library.loadedPath).toBe(B);
  });

  it('stops following once unsubscribed; a window that cannot watch carries on without it', async () => {
    const { backend, chats, store } = setup(1);
    const stop = await store.watch();
    stop();
    backend.unloadIdle();
    expect(chats.model?.path).toBe(A);

    vi.mocked(backend.api.onModelChanged).mockRejectedValueOnce({ kind: 'store', message: 'not allowed' });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const none = await store.watch();
    expect(warn).toHaveBeenCalledWith('changes of the loaded model are not available:', 'not allowed');
    expect(() => none()).not.toThrow();
    warn.mockRestore();
  });
});

describe('ChatModelStore: a model picked', () => {
  it('a file that is not there: the banner says so, and the chats are read again', async () => {
    const { backend, chats, store } = setup(1);
    expect(await store.use(1, GONE)).toBe(false);
    expect(chats.error).toBe(`there is no model file at ${GONE}`);
    await settle();
    expect(backend.api.listChats).toHaveBeenCalled();
  });

  const fromLibrary: [string, number | null, 'useLocalModel' | 'loadModel'][] = [
    ['with a local chat open, the model becomes its model', 1, 'useLocalModel'],
    ['with a remote chat open, it is only loaded', 4, 'loadModel'],
    ['without a chat, it is only loaded', null, 'loadModel'],
  ];
  it.each(fromLibrary)("the model manager's Load: %s", async (_, open, command) => {
    const { backend, chats, library, store } = setup(open);
    expect(await store.loadFromLibrary(B)).toBe(true);
    expect(backend.api[command]).toHaveBeenCalledTimes(1);
    expect(chats.model?.path).toBe(B);
    expect(library.loading).toBeNull();
    if (command === 'useLocalModel') expect(chats.chats.find((c) => c.id === open)?.model).toEqual(local(B));
  });
});
