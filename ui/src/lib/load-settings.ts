// How the loaded model is loaded: field descriptions, what is in use, and error mapping. Pure
// functions over plain values; the reactive store is in load-settings.svelte.ts.
import type { ComputeDevice, LoadParams, ModelInfo } from '../ipc/bindings';
import { LOAD_CHOICES } from '../ipc/contract';
import { fileName, type FieldProblem } from './format';
import { U32_MAX, deepEqual, formatNumber, type FieldInfo } from './settings';

export type LoadKey = keyof LoadParams;

/** How a field is edited. */
export type LoadControl =
  /** A whole number. */
  | { kind: 'number' }
  /** A whole number, or null for automatic; with `none`, 0 is offered as "None". */
  | { kind: 'auto'; none?: boolean }
  | { kind: 'choice'; options: { value: string; label: string }[] }
  | { kind: 'toggle' }
  /** Text that is null when empty. */
  | { kind: 'template' }
  /** A list of "host:port", one a line. */
  | { kind: 'endpoints' }
  /** One of this machine's GPUs, or null for the first found. */
  | { kind: 'device' }
  /** One of the image projectors beside the model file, or null for the one found there. */
  | { kind: 'projector' };

export type LoadFieldInfo = FieldInfo & { control: LoadControl };

/** A segmented choice of the values the backend takes (contract.json), each shown as `label` says. */
function choice(values: readonly string[], label: (value: string) => string = (value) => value): LoadControl {
  return { kind: 'choice', options: values.map((value) => ({ value, label: label(value) })) };
}

const capitalized = (value: string) => value.charAt(0).toUpperCase() + value.slice(1);

/** Every load setting, in display order. */
export const LOAD_FIELDS: Record<LoadKey, LoadFieldInfo> = {
  nCtx: {
    label: 'Context length',
    help: 'Tokens of conversation the model sees at once; longer needs more memory. Auto picks what fits, up to the trained length.',
    control: { kind: 'auto' },
  },
  nThreads: {
    label: 'CPU threads',
    help: 'Threads that read the prompt and write the reply on the CPU. Auto starts writing on one fewer than the physical cores and moves to every core when that is faster and the system shows the extra core free: each step waits for its slowest thread, so a core another program keeps busy (a browser, a build, this window) can slow every core far below one fewer. Prompts read on every core, or on one fewer while that core is taken. Greedy and seeded replies always read and write on every core, so they come out the same each time. A number set here is used as is.',
    control: { kind: 'auto' },
  },
  nBatch: {
    label: 'Batch size',
    help: 'Prompt tokens handed to the model per step while it reads a prompt; larger is faster and uses more memory.',
    control: { kind: 'number' },
  },
  nUbatch: {
    label: 'Micro-batch size',
    help: 'Tokens computed at once within a batch (at most the batch size); larger uses more memory.',
    control: { kind: 'number' },
  },
  nGpuLayers: {
    label: 'GPU layers',
    help: 'Layers offloaded to the GPU: auto offloads all that fit, none keeps the model on the CPU.',
    control: { kind: 'auto', none: true },
  },
  device: {
    label: 'GPU',
    help: "The GPU the layers go to; auto takes the first found (CUDA before Vulkan). A GPU pinned here that is gone leaves the model on the CPU, and the model menu says so.",
    control: { kind: 'device' },
  },
  flashAttention: {
    label: 'Flash attention',
    help: 'A faster attention kernel that needs less memory; auto uses it where the hardware supports it.',
    control: choice(LOAD_CHOICES.flashAttention, capitalized),
  },
  kvCacheType: {
    label: 'KV cache type',
    help: 'How the context is stored: smaller types fit longer contexts at a small cost in quality; quantized needs flash attention.',
    control: choice(LOAD_CHOICES.kvCacheType),
  },
  useMmap: {
    label: 'Memory-map the file',
    help: 'Reads the model file on demand instead of copying it into memory first: faster loads, less RAM.',
    control: { kind: 'toggle' },
  },
  useMlock: {
    label: 'Lock in memory',
    help: 'Keeps the whole model in RAM so the system never swaps it out; needs that much free memory.',
    control: { kind: 'toggle' },
  },
  reuseKv: {
    label: 'Reuse the prompt cache',
    help: 'Keeps the conversation already read between replies, so only new text is read; turn off only to measure the gain.',
    control: { kind: 'toggle' },
  },
  chatTemplate: {
    label: 'Chat template override',
    help: "A Jinja template that lays out the conversation instead of the model's own; empty uses the model's.",
    control: { kind: 'template' },
  },
  projector: {
    label: 'Image projector',
    help: "The projector (mmproj-….gguf) a vision model reads images through. Auto takes the one beside the model file; a folder holding several (their precisions) offers each here. One made for another model is refused, and the model then reads text only.",
    control: { kind: 'projector' },
  },
  imageMinTokens: {
    label: 'Image tokens, fewest',
    help: "The fewest tokens the projector makes of an image: a small image is enlarged to them, so the model sees its detail. Auto keeps the projector's own. Only projectors that keep an image's shape (Qwen-VL, Pixtral, Gemma 4 and their kin) take it; those that make every image one square ignore it.",
    control: { kind: 'auto' },
  },
  imageMaxTokens: {
    label: 'Image tokens, most',
    help: "The most tokens the projector makes of an image: a large image is scaled down to them. Fewer read faster and leave more of the context for the chat; more see finer detail. Auto keeps the projector's own (Qwen2-VL's allows 16,384), held to the micro-batch size for models that read an image whole (Gemma 3, Gemma 4): raise that for more.",
    control: { kind: 'auto' },
  },
  rpcServers: {
    label: 'RPC servers',
    help: "Other machines' GPUs, each running llama.cpp's rpc-server: one host:port a line. The layers are split over them and this machine's GPU by their free memory. rpc-server trusts whoever reaches it: use it on a private network only.",
    control: { kind: 'endpoints' },
  },
};

export const LOAD_KEYS = Object.keys(LOAD_FIELDS) as LoadKey[];

export function isLoadKey(key: string): key is LoadKey {
  return key in LOAD_FIELDS;
}

/** The fields whose "In use" is worth showing even when unchanged: what "auto" resolved to. */
const RESOLVED: readonly LoadKey[] = ['nCtx', 'nThreads', 'projector'];

/** A value as people read it: "auto", "none", "512", "on", "the model's own". */
export function formatLoadValue<K extends LoadKey>(key: K, value: LoadParams[K]): string {
  if (value === null) return NULL_TEXT[key] ?? 'auto';
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (typeof value === 'number') return key === 'nGpuLayers' && value === 0 ? 'none' : formatNumber(value);
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.join(', ');
  if (key === 'projector') return fileName(String(value));
  return key === 'chatTemplate' ? 'override' : String(value);
}

/** What null means where it is not plain "auto". */
const NULL_TEXT: Partial<Record<LoadKey, string>> = {
  chatTemplate: "none (the model's own)",
  device: 'auto (the first GPU)',
  projector: 'auto (the one beside the model)',
  imageMinTokens: "auto (the projector's own)",
  imageMaxTokens: "auto (the projector's own)",
};

/** What the loaded model uses for `key`, with automatic values resolved where the backend says. */
export function inUse(key: LoadKey, model: ModelInfo): string {
  const auto = model.load[key] === null;
  if (key === 'nCtx') {
    const length = `${formatNumber(model.nCtx)} of ${formatNumber(model.nCtxTrain)} trained`;
    return auto ? `Auto (${length})` : length;
  }
  if (key === 'nThreads') {
    const used = model.nThreads === model.nThreadsBatch ? String(model.nThreads) : `${model.nThreads} writing, ${model.nThreadsBatch} reading the prompt`;
    return auto ? `Auto (${used})` : used;
  }
  if (key === 'chatTemplate') return auto ? "The model's own" : 'Override';
  if (key === 'projector') {
    if (auto) return `Auto (${model.projector ? fileName(model.projector) : 'none beside the model: it reads text only'})`;
    return model.projector ? fileName(model.projector) : 'None: the projector was refused, the model reads text only';
  }
  const text = formatLoadValue(key, model.load[key]);
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * The line under a field about the loaded model: what it uses until a reload when that differs
 * from the field (`pending`), else what "auto" resolved to; null when there is nothing to say.
 */
export function loadNote(key: LoadKey, params: LoadParams, model: ModelInfo): { text: string; pending: boolean } | null {
  if (!deepEqual(params[key], model.load[key])) return { text: `In use until reload: ${inUse(key, model)}`, pending: true };
  if (RESOLVED.includes(key)) return { text: `In use: ${inUse(key, model)}`, pending: false };
  return null;
}

export type AutoChoice = 'auto' | 'none' | 'custom';

export function autoChoice(value: number | null, none = false): AutoChoice {
  if (value === null) return 'auto';
  return none && value === 0 ? 'none' : 'custom';
}

export function fromChoice(choice: AutoChoice, custom: number): number | null {
  return choice === 'auto' ? null : choice === 'none' ? 0 : custom;
}

/** Where a "Custom" number starts: what the model uses now (auto resolved), else a typical value. */
export function customStart(key: LoadKey, model: ModelInfo): number {
  if (key === 'nCtx') return model.nCtx;
  if (key === 'nThreads') return model.nThreads;
  const used = model.load[key];
  return typeof used === 'number' && used > 0 ? used : (TYPICAL[key] ?? 32);
}

/** Where a "Custom" number starts when the model uses none yet. */
const TYPICAL: Partial<Record<LoadKey, number>> = {
  // The layer count of most 7–8B models; the backend offloads no more than there are.
  nGpuLayers: 32,
  // A 448 × 448 image to Qwen2-VL; a page of text stays legible at 1,024.
  imageMinTokens: 256,
  imageMaxTokens: 1024,
};

/** The device choices: auto, then each GPU of this machine (the CPU and other machines' devices are
 *  chosen otherwise: GPU layers 0, RPC servers), and a pinned one no longer found, marked so. */
export function deviceOptions(devices: readonly ComputeDevice[], pinned: string | null): { value: string; label: string; title?: string }[] {
  const gpus = devices.filter((d) => d.kind !== 'cpu' && d.backend !== 'RPC');
  const options = [
    { value: AUTO_DEVICE, label: 'Auto (the first found)' },
    ...gpus.map((d) => ({ value: d.name, label: `${d.description} (${d.name})`, title: d.description })),
  ];
  if (pinned !== null && !gpus.some((d) => d.name === pinned)) options.push({ value: pinned, label: `${pinned} (not found)`, title: 'Not on this machine now' });
  return options;
}

/** The choice that stands for null (the first GPU found); ggml names no device so. */
export const AUTO_DEVICE = 'auto';

/** The choice that stands for null (the projector beside the model); no path is so named. */
export const AUTO_PROJECTOR = 'auto';

/** The projector choices: auto, each projector beside the model (by file name), and one chosen that
 *  is not among them, marked so. */
export function projectorOptions(found: readonly string[], chosen: string | null): { value: string; label: string; title?: string }[] {
  const options = [
    { value: AUTO_PROJECTOR, label: 'Auto (the one beside the model)' },
    ...found.map((path) => ({ value: path, label: fileName(path), title: path })),
  ];
  if (chosen !== null && !found.includes(chosen)) options.push({ value: chosen, label: `${fileName(chosen)} (not beside the model)`, title: chosen });
  return options;
}

/** The endpoints in typed text: one a line (or separated by commas or spaces), blanks dropped. */
export function endpointsValue(text: string): string[] {
  return text.split(/[\s,]+/).filter((endpoint) => endpoint !== '');
}

/** The template override for typed text: blank text means the model's own template. */
export function templateValue(text: string): string | null {
  return text.trim() === '' ? null : text;
}

/** Why these params cannot be sent (a number the backend cannot even parse), and the field; null when they can. */
export function unfinishedLoadEdit(params: LoadParams): FieldProblem | null {
  for (const key of LOAD_KEYS) {
    const value = params[key];
    if (typeof value === 'number' && !(Number.isInteger(value) && value >= 0 && value <= U32_MAX)) {
      return { message: `${LOAD_FIELDS[key].label} must be a whole number from 0 to ${formatNumber(U32_MAX)}.`, field: key };
    }
  }
  return null;
}
