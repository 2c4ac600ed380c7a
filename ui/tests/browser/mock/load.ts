// The loaded model and its load settings: saved per model, validated as hearth-core's load.rs has it, and put in
// force by reload_model ("auto" resolved as the engine does). Defaults and ranges come from the contract.
import type { LoadParams, LoadSettings, ModelInfo } from '../../../src/ipc/bindings';
import { spillCaches } from './caches';
import { AUTO_CONTEXT_MAX, DEFAULT_LOAD, LOAD_CHOICES } from './contract';
import { argsRefused, type Handlers } from './ipc';
import { config, state, type ModelFile } from './state';
import { clone, delay, ipcError, isU32 } from './util';

const PHYSICAL_CORES = 8;
const optU32 = (v: unknown) => v === null || isU32(v);
const FLASH_ATTENTION: readonly string[] = LOAD_CHOICES.flashAttention;
const KV_TYPES: readonly string[] = LOAD_CHOICES.kvCacheType;

const noModel = () => ipcError('noModel', 'no model is loaded');

/** The model as the engine reports it once loaded with `load` ("auto" resolved). */
export function modelInfo(file: ModelFile, load: LoadParams): ModelInfo {
  const nCtxTrain = file.nCtxTrain ?? 8192;
  const nCtx = load.nCtx ?? Math.min(nCtxTrain, AUTO_CONTEXT_MAX);
  const projector = load.projector ?? file.projectors?.[0];
  return {
    name: file.name, path: file.path, sizeBytes: file.sizeBytes, load: clone(load), fromMemory: false,
    nCtx, nCtxTrain, nThreads: load.nThreads ?? PHYSICAL_CORES,
    nThreadsBatch: load.nThreads ?? PHYSICAL_CORES,
    kvBytes: nCtx * state.kvBytesPerToken,
    offload: clone(state.offload),
    ...(file.notice ? { notice: file.notice } : {}),
    ...(projector ? { projector } : {}),
    projectors: clone(file.projectors ?? []),
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

/** LoadParams' serde check (a plain string error, like Tauri's); what LoadParams::validate and the template compile
 *  refuse is in refusals.json. */
function validateLoad(p: LoadParams) {
  const problems: string[] = [];
  if (!p || typeof p !== 'object') problems.push('params is not an object');
  else {
    for (const key of Object.keys(p)) if (!(key in DEFAULT_LOAD)) problems.push(`unknown field ${key}`);
    for (const key of ['nCtx', 'nThreads', 'nGpuLayers', 'imageMinTokens', 'imageMaxTokens'] as const) if (!optU32(p[key])) problems.push(`${key} is not null or a u32: ${p[key]}`);
    for (const key of ['nBatch', 'nUbatch'] as const) if (!isU32(p[key])) problems.push(`${key} is not a u32: ${p[key]}`);
    for (const key of ['useMmap', 'useMlock', 'reuseKv'] as const) if (typeof p[key] !== 'boolean') problems.push(`${key} is not a boolean`);
    if (!FLASH_ATTENTION.includes(p.flashAttention)) problems.push(`bad flashAttention ${p.flashAttention}`);
    if (!KV_TYPES.includes(p.kvCacheType)) problems.push(`bad kvCacheType ${p.kvCacheType}`);
    if (p.chatTemplate !== null && typeof p.chatTemplate !== 'string') problems.push('chatTemplate is not null or a string');
  }
  if (problems.length > 0) argsRefused('set_load_settings', 'params', problems);
}

function setLoadSettings(params: LoadParams) {
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
