// The loaded model and its load settings: saved per model, validated as hearth-core's load.rs has it, and put in
// force by reload_model ("auto" resolved as the engine does). Defaults and ranges come from the contract.
import type { LoadParams, LoadSettings, ModelInfo } from '../../../src/ipc/bindings';
import { spillCaches } from './caches';
import { AUTO_CONTEXT_MAX, DEFAULT_LOAD, LOAD_CHOICES, LOAD_RANGES } from './contract';
import { argsRefused, type Handlers } from './ipc';
import { config, state, type ModelFile } from './state';
import { clone, delay, ipcError, isU32, refuse } from './util';

const LOAD_RANGE = Object.fromEntries(LOAD_RANGES.map((r) => [r.key, r]));
const inRange = (key: string, v: number) => v >= LOAD_RANGE[key].min && v <= LOAD_RANGE[key].max;
const PHYSICAL_CORES = 8;
const optU32 = (v: unknown) => v === null || isU32(v);
const FLASH_ATTENTION: readonly string[] = LOAD_CHOICES.flashAttention;
const KV_TYPES: readonly string[] = LOAD_CHOICES.kvCacheType;

const noModel = () => ipcError('noModel', 'no model is loaded');

/** The model as the engine reports it once loaded with `load` ("auto" resolved). */
export function modelInfo(file: ModelFile, load: LoadParams): ModelInfo {
  const nCtxTrain = file.nCtxTrain ?? 8192;
  const nCtx = load.nCtx ?? Math.min(nCtxTrain, AUTO_CONTEXT_MAX);
  return {
    name: file.name, path: file.path, sizeBytes: file.sizeBytes, load: clone(load), fromMemory: false,
    nCtx, nCtxTrain, nThreads: load.nThreads ?? PHYSICAL_CORES,
    nThreadsBatch: load.nThreads ?? PHYSICAL_CORES,
    kvBytes: nCtx * state.kvBytesPerToken,
    offload: clone(state.offload),
    ...(file.notice ? { notice: file.notice } : {}),
  };
}

/** The model the app starts with (config.model), loaded with its saved settings (config.load over the defaults). */
export function initLoad() {
  if (config.model) {
    state.loadSaved[config.model.path] = { ...clone(DEFAULT_LOAD), ...clone(config.load ?? {}) };
    state.model = modelInfo(config.model, state.loadSaved[config.model.path]);
  }
}

function loadSettings(): LoadSettings {
  if (!state.model) throw noModel();
  const saved = state.loadSaved[state.model.path] ?? clone(DEFAULT_LOAD);
  return { model: clone(state.model), saved: clone(saved), defaults: clone(DEFAULT_LOAD), needsReload: JSON.stringify(saved) !== JSON.stringify(state.model.load) };
}

/** LoadParams' serde check (a plain string error, like Tauri's), then LoadParams::validate and the template compile. */
function validateLoad(p: LoadParams) {
  const problems: string[] = [];
  if (!p || typeof p !== 'object') problems.push('params is not an object');
  else {
    for (const key of Object.keys(p)) if (!(key in DEFAULT_LOAD)) problems.push(`unknown field ${key}`);
    for (const key of ['nCtx', 'nThreads', 'nGpuLayers'] as const) if (!optU32(p[key])) problems.push(`${key} is not null or a u32: ${p[key]}`);
    for (const key of ['nBatch', 'nUbatch'] as const) if (!isU32(p[key])) problems.push(`${key} is not a u32: ${p[key]}`);
    for (const key of ['useMmap', 'useMlock', 'reuseKv'] as const) if (typeof p[key] !== 'boolean') problems.push(`${key} is not a boolean`);
    if (!FLASH_ATTENTION.includes(p.flashAttention)) problems.push(`bad flashAttention ${p.flashAttention}`);
    if (!KV_TYPES.includes(p.kvCacheType)) problems.push(`bad kvCacheType ${p.kvCacheType}`);
    if (p.chatTemplate !== null && typeof p.chatTemplate !== 'string') problems.push('chatTemplate is not null or a string');
  }
  if (problems.length > 0) argsRefused('set_load_settings', 'params', problems);
  if (p.kvCacheType !== 'f16' && p.flashAttention === 'off') {
    throw refuse('kvCacheType,flashAttention', 'a quantized KV cache needs flash attention (auto or on)');
  }
  if (!(inRange('nBatch', p.nBatch) && inRange('nUbatch', p.nUbatch))) {
    throw refuse('nBatch,nUbatch', `batch and ubatch sizes must be ${LOAD_RANGE.nBatch.text}`);
  }
  if (p.nUbatch > p.nBatch) throw refuse('nUbatch,nBatch', `ubatch (${p.nUbatch}) must be at most the batch size (${p.nBatch})`);
  if (p.nCtx !== null && !inRange('nCtx', p.nCtx)) throw refuse('nCtx', `context length must be ${LOAD_RANGE.nCtx.text}`);
  if (p.nThreads !== null && !inRange('nThreads', p.nThreads)) throw refuse('nThreads', `threads must be ${LOAD_RANGE.nThreads.text}`);
  if (p.chatTemplate !== null && p.chatTemplate.trim() === '') {
    throw refuse('chatTemplate', "the chat template override is empty: clear it to use the model's own");
  }
  // Not minijinja, but the same verdict for unbalanced delimiters and unclosed for/if blocks.
  const count = (t: string, re: RegExp) => (t.match(re) ?? []).length;
  const t = p.chatTemplate;
  if (
    t !== null &&
    (count(t, /\{%/g) !== count(t, /%\}/g) || count(t, /\{\{/g) !== count(t, /\}\}/g) ||
      count(t, /\{%-?\s*for\b/g) !== count(t, /\{%-?\s*endfor\b/g) || count(t, /\{%-?\s*if\b/g) !== count(t, /\{%-?\s*endif\b/g))
  ) {
    throw refuse('chatTemplate', 'the chat template does not compile: syntax error: unexpected end of input, expected end of block (in chat:1)');
  }
}

function setLoadSettings(params: LoadParams) {
  state.loadSaves.push(clone(params));
  validateLoad(params);
  if (!state.model) throw noModel();
  state.loadSaved[state.model.path] = clone(params);
  return loadSettings();
}

async function reloadModel() {
  if (!state.model) throw noModel();
  const saved = state.loadSaved[state.model.path];
  await delay(state.reloadMs);
  const next = modelInfo(state.model, saved);
  if (next.nCtx > state.maxCtx) {
    throw ipcError(
      'engine',
      `llama.cpp could not create a context of ${next.nCtx} tokens (out of memory); the model was loaded again with its previous settings`,
    );
  }
  spillCaches();
  state.model = next;
  return loadSettings();
}

export const loadCommands = {
  activeModel: () => (state.model ? clone(state.model) : null),
  computeDevices: () => clone(state.devices),
  getLoadSettings: loadSettings,
  setLoadSettings,
  reloadModel,
} satisfies Partial<Handlers>;
