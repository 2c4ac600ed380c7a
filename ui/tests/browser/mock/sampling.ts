// Sampling settings per scope, with the backend's inheritance (a chat inherits from the loaded model, everything
// from global), and presets. Defaults, ranges (with their wording and whole-number flags), presets, stage order and
// what "never" means for a logit bias come from the contract; validation is hearth-core's sampling.rs', message
// for message and in its order.
import type {
  Constraint,
  FieldRange,
  MbrUtility,
  Mirostat,
  SamplingParams,
  SamplingSettings,
  SettingsScope,
  Speculative,
  Strategy,
} from '../../../src/ipc/bindings';
import { BUILT_IN_PRESETS, DEFAULT_SAMPLING, SAMPLER_STAGES, SAMPLING_RANGES } from './contract';
import { argsRefused, type Handlers } from './ipc';
import { config, state } from './state';
import { clone, isU32, variants } from './util';

const MIROSTAT = variants<Mirostat>({ off: true, v1: true, v2: true });
const SPECULATIVE = variants<Speculative>({ off: true, promptLookup: true, draftModel: true });
const STRATEGY = variants<Strategy>({ sampling: true, consensus: true, beam: true });
const MBR_UTILITY = variants<MbrUtility>({ chrF: true, exactMatch: true });
const CONSTRAINT = variants<Constraint['kind']>({ gbnf: true, jsonSchema: true });

/** Serde's check of a whole-number field (a range's `integer`): an i32 where the range goes below 0, else a u32. */
function wholeProblem({ key, min }: FieldRange, value: unknown) {
  if (min < 0 ? Number.isInteger(value) : isU32(value)) return null;
  return `${key} is not ${min < 0 ? 'an i32' : 'a u32'}: ${value}`;
}

/** Tauri's own argument check: wrong JSON types never reach the command (a plain string error). */
export function checkSamplingShape(sent: unknown) {
  const problems: string[] = [];
  if (!sent || typeof sent !== 'object') return ['params is not an object'];
  const params = sent as Record<string, unknown>;
  const p = sent as SamplingParams;
  for (const [key, value] of Object.entries(DEFAULT_SAMPLING)) {
    if (!(key in params)) problems.push(`missing field ${key}`);
    else if (typeof value === 'number' && typeof params[key] !== 'number') problems.push(`${key} is not a number`);
  }
  for (const key of Object.keys(params)) if (!(key in DEFAULT_SAMPLING)) problems.push(`unknown field ${key}`);
  for (const range of SAMPLING_RANGES.filter((r) => r.integer)) {
    const problem = wholeProblem(range, params[range.key]);
    if (problem) problems.push(problem);
  }
  if (p.seed !== null && !isU32(p.seed)) problems.push(`seed is not null or a u32: ${p.seed}`);
  if (!MIROSTAT.includes(p.mirostat)) problems.push(`bad mirostat ${p.mirostat}`);
  if (!SPECULATIVE.includes(p.speculative)) problems.push(`bad speculative ${p.speculative}`);
  if (p.draftModel !== null && typeof p.draftModel !== 'string') problems.push(`draftModel is not null or a string: ${p.draftModel}`);
  if (!STRATEGY.includes(p.strategy)) problems.push(`bad strategy ${p.strategy}`);
  if (!MBR_UTILITY.includes(p.mbrUtility)) problems.push(`bad mbrUtility ${p.mbrUtility}`);
  for (const key of ['ignoreEos', 'earlyStopping'] as const) if (typeof p[key] !== 'boolean') problems.push(`${key} is not a boolean`);
  for (const key of ['stop', 'drySequenceBreakers'] as const) {
    if (!Array.isArray(p[key]) || p[key].some((s) => typeof s !== 'string')) problems.push(`${key} is not a list of strings`);
  }
  if (!Array.isArray(p.samplerOrder) || p.samplerOrder.some((s) => !SAMPLER_STAGES.includes(s))) problems.push('bad samplerOrder');
  const c = p.constraint;
  if (c !== null && !(c && CONSTRAINT.includes(c.kind) && typeof c.source === 'string' && Object.keys(c).length === 2)) {
    problems.push(`bad constraint ${JSON.stringify(c)}`);
  }
  for (const b of Array.isArray(p.logitBias) ? p.logitBias : [null]) {
    const t = b?.target;
    const ok =
      b && typeof b.bias === 'number' && Object.keys(b).length === 2 && t &&
      ((t.kind === 'token' && isU32(t.id) && Object.keys(t).length === 2) ||
        (t.kind === 'text' && typeof t.text === 'string' && Object.keys(t).length === 2));
    if (!ok) problems.push(`bad logitBias entry ${JSON.stringify(b)}`);
  }
  return problems;
}

/** Tauri's argument check of a SettingsScope; the storage key as SettingsScope::key has it. */
function scopeKey(cmd: string, scope: SettingsScope) {
  const s = scope as Record<string, unknown> | null;
  const ok =
    s && typeof s === 'object' &&
    ((s.kind === 'global' && Object.keys(s).length === 1) ||
      (s.kind === 'model' && typeof s.path === 'string' && Object.keys(s).length === 2) ||
      (s.kind === 'chat' && Number.isInteger(s.id) && Object.keys(s).length === 2));
  if (!ok) {
    state.contractErrors.push(`${cmd}: bad scope ${JSON.stringify(scope)}`);
    throw `invalid args \`scope\` for command \`${cmd}\`: ${JSON.stringify(scope)}`;
  }
  return scope.kind === 'global' ? 'sampling' : scope.kind === 'model' ? `sampling:model:${scope.path}` : `sampling:chat:${scope.id}`;
}

/** SettingsScope::lookup_order: a chat inherits from the loaded model, everything from global. */
function lookupOrder(scope: SettingsScope) {
  const order = [scope];
  if (scope.kind === 'chat' && state.model) order.push({ kind: 'model', path: state.model.path });
  if (scope.kind !== 'global') order.push({ kind: 'global' });
  return order;
}

/** The shape check (a contract violation when it fails); what SamplingParams::validate refuses is in refusals.json. */
function checkParams(cmd: string, params: SamplingParams) {
  const problems = checkSamplingShape(params);
  if (problems.length > 0) argsRefused(cmd, 'params', problems);
}

/** The settings at `scope` and the scope they come from (itself, a broader one, or null for the defaults). */
export function getSampling(sent: SettingsScope | null): SamplingSettings {
  const scope = sent ?? { kind: 'global' };
  const key = scopeKey('get_sampling', scope);
  const source = lookupOrder(scope).find((s) => state.sampling[scopeKey('get_sampling', s)]) ?? null;
  return {
    current: clone(source ? state.sampling[scopeKey('get_sampling', source)] : DEFAULT_SAMPLING),
    source: clone(source),
    own: key in state.sampling,
    defaults: clone(DEFAULT_SAMPLING),
    ranges: clone([...SAMPLING_RANGES]),
    presets: clone([...BUILT_IN_PRESETS, ...state.presets]),
  };
}

function setSampling(params: SamplingParams, sent: SettingsScope | null) {
  const scope = sent ?? { kind: 'global' };
  const key = scopeKey('set_sampling', scope);
  checkParams('set_sampling', params);
  state.sampling[key] = clone(params);
  return clone(params);
}

function savePreset(sent: string, params: SamplingParams) {
  checkParams('save_preset', params);
  const name = sent.trim();
  state.presets = [...state.presets.filter((p) => p.name !== name), { name, params: clone(params), builtIn: false }];
  return null;
}

/** The test's own settings: per scope (`ownSampling`), global (`sampling`), and the user's presets, each over the defaults. */
export function initSampling() {
  for (const [scope, params] of config.ownSampling ?? []) {
    state.sampling[scopeKey('config', scope)] = { ...clone(DEFAULT_SAMPLING), ...clone(params) };
  }
  if (config.sampling) state.sampling.sampling = { ...clone(DEFAULT_SAMPLING), ...clone(config.sampling) };
  state.presets = (config.presets ?? []).map((p) => ({ name: p.name, params: { ...clone(DEFAULT_SAMPLING), ...clone(p.params) }, builtIn: false }));
}

export const samplingCommands = {
  getSampling,
  setSampling,
  clearSampling: (scope) => {
    delete state.sampling[scopeKey('clear_sampling', scope)];
    return null;
  },
  savePreset,
  deletePreset: (name) => {
    state.presets = state.presets.filter((p) => p.name !== name);
    return null;
  },
} satisfies Partial<Handlers>;
