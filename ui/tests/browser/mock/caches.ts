// Each chat's KV cache, as the engine keeps it (state.caches): where a local reply's cached prompt came from
// (`promptSource`: the chat's cache live, put away in RAM, spilled to disk, or read ahead from its draft), the
// budgets in force as the engine has them (caches in RAM beyond theirs move to disk, files beyond theirs go, the
// least recently used first; so with 0 MB of RAM a chat switched back to is restored from disk), the models
// kept in memory after another was loaded, and drafts read ahead while the user types (`prefill_draft`; with
// `readsAhead` only: whether a draft is read before Enter depends on the test machine's timing, which no other
// test should). A file on disk is valid for one model and context, so a cache is kept under both.
// Chats whose caches a restart left on disk for the model loaded at start: `cachesOnDisk` (chat ids).
import type { Attachment, CacheBudgets, ChatCacheUsage, ModelInfo, PromptSource } from '../../../src/ipc/bindings';
import { CACHE_BUDGET_DEFAULTS } from './contract';
import { findChat } from './history';
import { checkU32Fields, type Handlers } from './ipc';
import { config, state, type KeptIn } from './state';
import { clone } from './util';

const MB = 2 ** 20;

const cacheKey = (chatId: number) => `${state.model!.path}|${state.model!.nCtx}#${chatId}`;

/** The engine taking a chat's cache for its reply: where it came from ('new' when nowhere). */
export function takeCache(chatId: number): PromptSource {
  const { caches } = state;
  const key = cacheKey(chatId);
  const live = caches.live === key;
  const source = live ? (caches.typed === key ? 'typed' : 'live') : (caches.kept.get(key) ?? 'new');
  makeLive(key);
  caches.typed = null;
  return source;
}

/** `key`'s cache becomes the engine's live one; the chat that had it before is put away in RAM (within its budget). */
function makeLive(key: string) {
  const { caches } = state;
  if (caches.live !== null && caches.live !== key) caches.kept.set(caches.live, 'ram');
  caches.kept.delete(key);
  caches.live = key;
  keepWithinBudgets();
}

/**
 * prefill_draft, as the engine has it: a local chat's conversation and the draft up to its last word are
 * read into the chat's cache (made the live one), unless a reply is under way or nothing of the draft is
 * settled yet (one word, and no file); the chat's next reply then says `typed`. Remote chats ignore it.
 */
function prefillDraft(chatId: number, draft: string, attachments: Attachment[], stillTyping: boolean) {
  const chat = findChat(chatId);
  state.prefills.push({ chatId: chat.id, draft, stillTyping, at: performance.now() });
  if (!config.readsAhead || chat.model.kind === 'remote' || !state.model || state.generating.size > 0) return null;
  // Attached files are settled at once; typed text once its first word is.
  if (attachments.length === 0 && !/\s/.test(draft.trimEnd())) return null;
  const key = cacheKey(chat.id);
  makeLive(key);
  state.caches.typed = key;
  return null;
}

/** The kept caches in `where`, least recently used first (kept's order: put away last, last). */
const keptIn = (where: KeptIn) => [...state.caches.kept].filter(([, w]) => w === where).map(([key]) => key);

/**
 * chat_cache_usage: the cache files on disk (one per chat and model), those in RAM, the budgets, and the
 * loaded model's weights (its file) and context (its KV cache); 0 for both when none is loaded.
 */
function cacheUsage(): ChatCacheUsage {
  const files = keptIn('disk').length;
  const ramBytes = keptIn('ram').length * state.cacheFileBytes;
  const modelBytes = state.model?.sizeBytes ?? 0;
  const contextBytes = state.model?.kvBytes ?? 0;
  const keptModelBytes = keptBytes();
  return { bytes: files * state.cacheFileBytes, chats: files, ramBytes, budgets: clone(state.cacheBudgets), modelBytes, contextBytes, keptModelBytes };
}

const keptBytes = () => state.keptModels.reduce((sum, m) => sum + m.sizeBytes, 0);

/** Drops the least recently used kept models until they fit the budget for other models. */
const fitKeptModels = () => {
  while (keptBytes() > state.cacheBudgets.modelsRamMb * MB) state.keptModels.shift();
};

/** The engine's kept models (hearth-engine's kept.rs): the model left stays while the budget for other models allows, the oldest going first. */
export function keepModel(model: ModelInfo) {
  if (model.sizeBytes > state.cacheBudgets.modelsRamMb * MB) return;
  state.keptModels.push({ path: model.path, sizeBytes: model.sizeBytes });
  fitKeptModels();
}

/** The budgets in force, least recently used first: caches in RAM beyond its budget spill to disk, files beyond its budget go. */
function keepWithinBudgets() {
  const { caches, cacheBudgets, cacheFileBytes } = state;
  const over = (where: KeptIn, mb: number) => keptIn(where).length * cacheFileBytes > mb * MB;
  while (over('ram', cacheBudgets.ramMb)) caches.kept.set(keptIn('ram')[0], 'disk');
  while (over('disk', cacheBudgets.diskMb)) caches.kept.delete(keptIn('disk')[0]);
  fitKeptModels();
}

/** Saves the budgets after CacheBudgets' serde check; what CacheBudgets::validate refuses is in refusals.json. */
function setCacheBudgets(b: CacheBudgets) {
  state.cacheBudgets = checkU32Fields('set_chat_cache_budgets', 'budgets', b, CACHE_BUDGET_DEFAULTS);
  keepWithinBudgets();
  return cacheUsage();
}

/** The model unloaded (or replaced): every chat's cache spills to a file. */
export function spillCaches() {
  const { caches } = state;
  if (caches.live !== null) caches.kept.set(caches.live, 'disk');
  caches.live = null;
  caches.typed = null;
  for (const key of caches.kept.keys()) caches.kept.set(key, 'disk');
  keepWithinBudgets();
}

/** A deleted chat's cache goes with it. */
export function forgetCache(chatId: number) {
  const { caches } = state;
  const mine = (key: string) => key.endsWith(`#${chatId}`);
  if (caches.live !== null && mine(caches.live)) caches.live = null;
  if (caches.typed !== null && mine(caches.typed)) caches.typed = null;
  for (const key of [...caches.kept.keys()]) if (mine(key)) caches.kept.delete(key);
}

/** The caches a restart left on disk for the model loaded at start, within the budgets. */
export function initCaches() {
  if (state.model) for (const id of config.cachesOnDisk ?? []) state.caches.kept.set(cacheKey(id), 'disk');
  keepWithinBudgets();
}

export const cacheCommands = {
  prefillDraft,
  chatCacheUsage: cacheUsage,
  setChatCacheBudgets: setCacheBudgets,
  /** Every chat's cache goes, in RAM and on disk (the budgets stay); their next replies read the prompt anew. */
  clearChatCaches: () => {
    state.caches = { live: null, kept: new Map(), typed: null };
    return cacheUsage();
  },
} satisfies Partial<Handlers>;
