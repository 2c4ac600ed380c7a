// Loading models, and each chat's own model, as hearth-app's chat_model.rs has it. A load reports its progress
// (failures via `loadFailures`; cancel_load gives it up, the model before it loaded again); a model left for another
// stays in memory within its budget (a load of it is then from memory). A chat's local target names its file
// (`{ kind: 'local', model: path | null }`; null until the chat's first local reply records the loaded one);
// `load_chat_model` loads the chat's model when another (or none) is loaded (a chat naming none, while none is
// loaded, gets the model loaded last: `lastLoaded`); `use_local_model` picks a file for a chat and loads it; and
// every turn readies the chat's model first, its progress on the turn's events (those loads are counted in
// `turnLoads`). The idle unload is played by `__hearthMock.unloadIdle()`, which tells the `watch_model` channels (null).
import type { ChatEvent, ModelInfo, ModelLoading, ModelTarget } from '../../../src/ipc/bindings';
import { keepModel, spillCaches } from './caches';
import { DEFAULT_LOAD, FIT_CONTEXT_FALLBACK } from './contract';
import { findChat, modelNameOf, summary } from './history';
import type { Handlers, Sink } from './ipc';
import { fileExists, libraryModel } from './library';
import { modelInfo } from './load';
import { checkProvider, checkTarget } from './providers';
import { state, type Chat, type LibraryFile } from './state';
import { clone, delay, ipcError } from './util';

/** Windows told of the loaded model's changes they did not ask for (watch_model channels). */
const modelWatchers: Sink<ModelInfo | null>[] = [];

/** load_model's work: `m` loaded in place of the model, reporting to `progress` (null: to no one), or why not. */
async function loadFile(m: LibraryFile, progress: Pick<Sink<number>, 'send' | 'end'> | null) {
  if (state.generating.size > 0) throw ipcError('busy', 'a reply is being generated: stop it or wait, then load the model');
  if (m.error) throw ipcError('file', m.error);
  const failure = state.loadFailures[m.path];
  state.loadCancelled = false;
  const kept = state.keptModels.findIndex((k) => k.path === m.path);
  const fromMemory = kept >= 0 && !failure;
  for (const fraction of fromMemory ? [1] : [0, 0.15, 0.35, 0.55, 0.75, 0.9, 1]) {
    if (failure && fraction > 0.5) {
      progress?.end();
      throw clone(failure);
    }
    if (state.loadCancelled) {
      // As the app answers: the load given up, the model before it loaded again.
      progress?.end();
      const again = state.model ? `; ${state.model.name} is loaded again` : '';
      throw ipcError('engine', `loading ${m.path} was cancelled${again}`);
    }
    progress?.send(fraction);
    await delay(state.loadStepMs);
  }
  progress?.end();
  state.loadSaved[m.path] ??= clone(DEFAULT_LOAD);
  spillCaches();
  if (fromMemory) state.keptModels.splice(kept, 1);
  if (state.model && state.model.path !== m.path) keepModel(state.model);
  state.model = {
    ...modelInfo({ name: m.name, path: m.path, sizeBytes: m.sizeBytes, nCtxTrain: m.facts?.contextLength ?? FIT_CONTEXT_FALLBACK }, state.loadSaved[m.path]),
    fromMemory,
  };
  state.lastLoaded = m.path;
  return clone(state.model);
}

/**
 * App::ready_chat_model: the chat's model loaded when another (or none) is; null when nothing needed
 * loading (a remote chat, its model loaded, a chat naming none while one is loaded). A chat whose file
 * is gone gets words, and the loaded model stays.
 */
async function readyChatModel(chat: Chat, progress: Pick<Sink<ModelLoading>, 'send' | 'end'> | null) {
  if (chat.model.kind !== 'local') return null;
  let wanted = chat.model.model;
  if (wanted !== null && !fileExists(wanted)) {
    const name = modelNameOf(chat);
    throw ipcError('file', `this chat talks to ${name}, whose file is gone (${wanted}); pick another model for it with the model button`);
  }
  if (wanted === null) {
    if (state.model) return null;
    if (state.lastLoaded === null || !fileExists(state.lastLoaded)) return null; // the reply then says no model is loaded
    wanted = state.lastLoaded;
  }
  if (state.model?.path === wanted) return null;
  const file = libraryModel(wanted);
  const report = progress && {
    send: (fraction: number) => progress.send({ path: file.path, name: file.name, fraction }),
    end: () => progress.end(),
  };
  return loadFile(file, report);
}

/**
 * App::prepare_chat_model, before every turn: the chat's model readied, its load's progress told to `events` as
 * `modelLoading` (the window says nothing; failures concern `model`); a chat naming none records the loaded one.
 */
export async function prepareChatModel(chat: Chat, events: Sink<ChatEvent> | null) {
  const progress = events && {
    send: (data: ModelLoading) => events.send({ event: 'modelLoading', data }),
    end: () => {},
  };
  try {
    if (await readyChatModel(chat, progress)) state.turnLoads.push(state.model!.path);
  } catch (e) {
    throw { ...(e as object), field: 'model' };
  }
  if (chat.model.kind === 'local' && chat.model.model === null && state.model) chat.model = { kind: 'local', model: state.model.path };
}

/** App::use_local_model: `path` becomes the chat's model, loaded unless it is. */
async function useLocalModel(chatId: number, path: string, progress: Sink<number>) {
  const chat = findChat(chatId);
  if (!fileExists(path)) throw ipcError('file', `there is no model file at ${path}`);
  chat.model = { kind: 'local', model: path };
  const report = { send: (loading: ModelLoading) => progress.send(loading.fraction), end: () => progress.end() };
  const loaded = await readyChatModel(chat, report);
  return { chat: summary(chat), loaded };
}

/** Where the chat's next reply comes from: a provider's model, or a local file that is there. */
function setChatModel(chatId: number, target: ModelTarget) {
  checkTarget('set_chat_model', target);
  const chat = findChat(chatId);
  if (target.kind === 'remote') {
    checkProvider(target.provider);
    if (target.model.trim() === '') throw ipcError('invalidInput', 'pick a model of the provider');
  }
  if (target.kind === 'local' && target.model !== null && !fileExists(target.model)) {
    throw ipcError('invalidInput', `there is no model file at ${target.model}`);
  }
  chat.model = clone(target);
  return summary(chat);
}

/** The model leaves memory (unload_model, or the idle timer): its chats' caches go to disk, and no model stays kept. */
function unload() {
  spillCaches();
  state.model = null;
  state.keptModels = [];
}

/**
 * The engine's idle timer ran out (unloadIdleMinutes): the model leaves memory, its chats' caches go to
 * disk, and the windows are told (null), as AppState::unload_idle_model does.
 */
export function initLoading() {
  state.lastLoaded = state.model?.path ?? null;
  state.unloadIdle = () => {
    unload();
    for (const watcher of modelWatchers) watcher.send(null);
  };
}

export const loadingCommands = {
  loadModel: (path, progress) => loadFile(libraryModel(path), progress),
  loadChatModel: (chatId, progress) => readyChatModel(findChat(chatId), progress),
  useLocalModel,
  setChatModel,
  cancelLoad: () => {
    state.loadCancelled = true;
    return true;
  },
  watchModel: (onUpdate) => {
    modelWatchers.push(onUpdate);
    return null;
  },
  unloadModel: () => {
    unload();
    return null;
  },
} satisfies Partial<Handlers>;
