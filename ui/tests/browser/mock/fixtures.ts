// The mock backend's world unless a test says otherwise: the reply it writes, the providers' models, this
// machine's devices, Hugging Face's repositories and their files, and the library of GGUF files.
import type { DeviceReport, HubRepo, ModelFacts, Offload, RemoteModel, RepoQuant, StarterModel } from '../../../src/ipc/bindings';
import type { DownloadTrouble, LibraryFile, MockConfig, Reply } from './state';

export const GB = 1e9;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const isoAgo = (ms: number) => new Date(Date.now() - ms).toISOString();
export const HF_CACHE = '/home/me/.cache/huggingface/hub';
export const MODELS_DIR = '/home/me/.local/share/hearth/models';

export const DEFAULT_REPLY: Reply = { text: 'Hello! How can I help you today?', chunkSize: 4, delayMs: 20 };

/** What each default provider's models endpoint lists. */
export const REMOTE_MODELS: Record<string, RemoteModel[]> = {
  openai: [{ id: 'gpt-4o-mini', contextLength: null }, { id: 'gpt-4o', contextLength: null }, { id: 'o3-mini', contextLength: null }],
  anthropic: [{ id: 'claude-3-5-haiku-latest', contextLength: 200000 }, { id: 'claude-sonnet-4-0', contextLength: 200000 }],
};

/** The engine's compute devices (`compute_devices`). */
export const DEVICES: DeviceReport = {
  devices: [{ name: 'CPU', description: 'AMD EPYC', backend: 'CPU', kind: 'cpu', freeBytes: 24_000_000_000, totalBytes: 25_000_000_000 }],
  problems: [],
};

/** Where a loaded model's layers are, as the engine says. */
export const OFFLOAD: Offload = { backend: 'CPU', device: 'AMD EPYC', gpuLayers: 0, totalLayers: 30, label: 'On the CPU (AMD EPYC)' };

export const facts = (
  architecture: string, parameters: number, quantization: string | null, contextLength: number, layers: number, hasChatTemplate = true,
  reasoning: ModelFacts['reasoning'] = { kind: 'none' }, embedding = false,
): ModelFacts => ({ architecture, parameters, quantization, contextLength, layers, hasChatTemplate, reasoning, embedding });

export const hubRepos = (): HubRepo[] => [
  { id: 'HuggingFaceTB/SmolLM2-135M-Instruct-GGUF', downloads: 48211, likes: 37, updatedAt: isoAgo(3 * DAY + HOUR), gated: false },
  { id: 'bartowski/SmolLM2-1.7B-Instruct-GGUF', downloads: 12890, likes: 21, updatedAt: isoAgo(40 * DAY), gated: false },
  { id: 'Qwen/Qwen2.5-7B-Instruct-GGUF', downloads: 301544, likes: 412, updatedAt: isoAgo(9 * DAY), gated: false },
  { id: 'meta-llama/Llama-3.2-1B-Instruct-GGUF', downloads: 88012, likes: 164, updatedAt: isoAgo(5 * HOUR), gated: true },
  { id: 'unsloth/Llama-3.3-70B-Instruct-GGUF', downloads: 1_204_410, likes: 98, updatedAt: isoAgo(2 * DAY), gated: false },
  { id: 'ggml-org/SmolVLM-256M-Instruct-GGUF', downloads: 9_420, likes: 44, updatedAt: isoAgo(20 * DAY), gated: false },
];

/** The welcome screen's recommendation, as hearth_hub::starter words it for a machine with a GPU of 8 GB free. */
export const STARTER: StarterModel = {
  repo: 'Qwen/Qwen2.5-7B-Instruct-GGUF',
  name: 'Qwen2.5 7B Instruct',
  quant: 'Q4_K_M',
  reason: "It fits in your GPU's 8.0 GB free, so replies come quickly.",
};

/** A repository's model: its GGUF header's facts, its KV cache's bytes per token, its compute buffer, and its files. */
export type HubModel = { facts: ModelFacts; kvPerToken: number; computeBytes: number; quants: RepoQuant[] };

const split = (stem: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${stem}-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.gguf`);

/**
 * Per repository: its GGUF header's facts (the quantization is each file's own), the KV cache's bytes
 * per token (layers × K and V × KV heads × head size × 2 bytes), the compute buffer, and its files as
 * the hub lists them (not in order: the window sorts them).
 */
export const HUB_MODELS: Record<string, HubModel> = {
  'HuggingFaceTB/SmolLM2-135M-Instruct-GGUF': {
    facts: facts('llama', 134_515_008, null, 8192, 30), kvPerToken: 30 * 2 * 3 * 64 * 2, computeBytes: 0.04 * GB,
    quants: [
      { quant: 'Q8_0', files: ['smollm2-135m-instruct-q8_0.gguf'], projector: null, sizeBytes: 144_811_296 },
      { quant: 'F16', files: split('smollm2-135m-instruct-f16', 2), projector: null, sizeBytes: 270_897_952 },
      { quant: 'Q4_1', files: ['smollm2-135m-instruct-q4_1.gguf'], projector: null, sizeBytes: 98_402_592 },
    ],
  },
  'bartowski/SmolLM2-1.7B-Instruct-GGUF': {
    facts: facts('llama', 1_711_376_384, null, 8192, 24), kvPerToken: 24 * 2 * 32 * 64 * 2, computeBytes: 0.15 * GB,
    quants: [
      { quant: 'Q8_0', files: ['SmolLM2-1.7B-Instruct-Q8_0.gguf'], projector: null, sizeBytes: 1_820_414_944 },
      { quant: 'Q4_K_M', files: ['SmolLM2-1.7B-Instruct-Q4_K_M.gguf'], projector: null, sizeBytes: 1_055_609_824 },
    ],
  },
  'Qwen/Qwen2.5-7B-Instruct-GGUF': {
    facts: facts('qwen2', 7_615_616_512, null, 32768, 28), kvPerToken: 28 * 2 * 4 * 128 * 2, computeBytes: 0.3 * GB,
    quants: [
      { quant: 'Q4_K_M', files: split('qwen2.5-7b-instruct-q4_k_m', 2), projector: null, sizeBytes: 4_683_073_184 },
      { quant: 'Q8_0', files: split('qwen2.5-7b-instruct-q8_0', 3), projector: null, sizeBytes: 8_098_525_888 },
      { quant: 'Q2_K', files: ['qwen2.5-7b-instruct-q2_k.gguf'], projector: null, sizeBytes: 3_015_940_800 },
    ],
  },
  'meta-llama/Llama-3.2-1B-Instruct-GGUF': {
    facts: facts('llama', 1_235_814_432, null, 131072, 16), kvPerToken: 16 * 2 * 8 * 64 * 2, computeBytes: 0.12 * GB,
    quants: [
      { quant: 'Q4_K_M', files: ['Llama-3.2-1B-Instruct-Q4_K_M.gguf'], projector: null, sizeBytes: 807_694_464 },
      { quant: 'Q8_0', files: ['Llama-3.2-1B-Instruct-Q8_0.gguf'], projector: null, sizeBytes: 1_321_083_008 },
    ],
  },
  'unsloth/Llama-3.3-70B-Instruct-GGUF': {
    facts: facts('llama', 70_553_706_496, null, 131072, 80), kvPerToken: 80 * 2 * 8 * 128 * 2, computeBytes: 1.1 * GB,
    quants: [
      { quant: 'Q4_K_M', files: split('Llama-3.3-70B-Instruct-Q4_K_M', 2), projector: null, sizeBytes: 42_520_395_584 },
      { quant: 'F16', files: split('Llama-3.3-70B-Instruct-F16', 3), projector: null, sizeBytes: 141_107_412_992 },
    ],
  },
  // A vision model: each quantization comes with the repository's projector (its size included).
  'ggml-org/SmolVLM-256M-Instruct-GGUF': {
    facts: facts('llama', 162_826_560, null, 8192, 30), kvPerToken: 30 * 2 * 3 * 64 * 2, computeBytes: 0.05 * GB,
    quants: [
      { quant: 'Q8_0', files: ['SmolVLM-256M-Instruct-Q8_0.gguf'], projector: 'mmproj-SmolVLM-256M-Instruct-f16.gguf', sizeBytes: 365_064_256 },
      { quant: 'F16', files: ['SmolVLM-256M-Instruct-f16.gguf'], projector: 'mmproj-SmolVLM-256M-Instruct-f16.gguf', sizeBytes: 515_473_088 },
    ],
  },
};

/** "repo:quant" → what goes wrong with its download: a dropped connection (retried), or a disk that fills up. */
export const DOWNLOAD_TROUBLE: Record<string, DownloadTrouble> = {
  'HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:F16': { dropAt: 0.4 },
  'bartowski/SmolLM2-1.7B-Instruct-GGUF:Q8_0': { diskFullAt: 0.5 },
};

/** The library: the loaded model (config.model; the harness's MODEL) beside a few others, one of them damaged. */
export const defaultLibrary = (config: MockConfig): LibraryFile[] => [
  {
    path: config.model?.path ?? '/home/me/models/Llama-3.2-3B-Instruct-Q4_K_M.gguf', name: config.model?.name ?? 'Llama-3.2-3B-Instruct-Q4_K_M',
    source: 'linked', repo: null, sizeBytes: config.model?.sizeBytes ?? 2_019_377_696, facts: facts('llama', 3_212_749_824, 'Q4_K_M', 131072, 28), error: null,
  },
  {
    path: `${HF_CACHE}/models--Qwen--Qwen2.5-0.5B-Instruct-GGUF/snapshots/9217f5db79a29953eb74d5343926648285ec7e67/qwen2.5-0.5b-instruct-q8_0.gguf`,
    name: 'qwen2.5-0.5b-instruct-q8_0', source: 'hubCache', repo: 'Qwen/Qwen2.5-0.5B-Instruct-GGUF', sizeBytes: 675_710_816,
    facts: facts('qwen2', 494_032_768, 'Q8_0', 32768, 24), error: null,
  },
  {
    path: `${MODELS_DIR}/Phi-3.5-mini-instruct-Q4_K_M.gguf`, name: 'Phi-3.5-mini-instruct-Q4_K_M', source: 'modelsFolder', repo: null,
    sizeBytes: 2_393_232_608, facts: facts('phi3', 3_821_079_552, 'Q4_K_M', 131072, 32), error: null,
  },
  {
    path: `${MODELS_DIR}/TinyStories-33M-F16.gguf`, name: 'TinyStories-33M-F16', source: 'copied', repo: null, sizeBytes: 137_854_112,
    facts: facts('gpt2', 68_530_000, 'F16', 2048, 4, false), error: null,
  },
  {
    path: `${MODELS_DIR}/broken.gguf`, name: 'broken', source: 'modelsFolder', repo: null, sizeBytes: 4096, facts: null,
    error: 'broken.gguf is truncated: it ends at byte 4096 but its header needs at least byte 70231; download it again',
  },
];
