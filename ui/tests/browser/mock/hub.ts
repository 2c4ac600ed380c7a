// Hugging Face, as src-tauri's ipc/hub commands have it: search (`hubRepos`; a gated repository is refused without
// a token, `hubToken`), a repository's files, and whether a file fits this machine (`freeRamBytes`,
// `freeVramBytes`) before any download; the token the backend keeps ("hf_wrong" is refused).
import type { FitEstimate, FitVerdict } from '../../../src/ipc/bindings';
import { FIT_CONTEXT_FALLBACK } from './contract';
import { HUB_MODELS } from './fixtures';
import { argsRefused, type Handlers } from './ipc';
import { state } from './state';
import { clone, delay, ipcError } from './util';

const GATED_MESSAGE =
  'meta-llama/Llama-3.2-1B-Instruct-GGUF is gated: accept its license on huggingface.co, then add your Hugging Face token in Models → Discover';

/** Repository `repo`'s model, when the hub lists it and lets this user see it. */
export function hubModel(repo: string) {
  const model = HUB_MODELS[repo];
  const listed = state.hubRepos.find((r) => r.id === repo);
  if (!model || !listed) throw ipcError('notFound', `no repository ${repo} on Hugging Face`);
  if (listed.gated && !state.hubToken) throw ipcError('hubAuth', GATED_MESSAGE);
  return model;
}

function hubSearch(query: string) {
  const words = query.toLowerCase().split(/\s+/).filter((w) => w && w !== 'gguf');
  return clone(state.hubRepos.filter((r) => words.every((w) => r.id.toLowerCase().includes(w))));
}

/** hearth-hub's fit: weights + KV cache at the context + compute, against free VRAM (all layers) or VRAM and RAM (some). */
function hubFit(repo: string, file: string, ctx: number | null): FitEstimate {
  if (!(ctx === null || (Number.isInteger(ctx) && ctx > 0))) argsRefused('hub_fit', 'contextLength', [`contextLength should be null or a u32, got ${JSON.stringify(ctx)}`]);
  const model = hubModel(repo);
  const quant = model.quants.find((q) => q.files[0] === file);
  if (!quant) throw ipcError('notFound', `${repo} has no file ${file}, or it is not a quantization's first part`);
  const contextLength = ctx ?? model.facts.contextLength ?? FIT_CONTEXT_FALLBACK;
  const weightsBytes = quant.sizeBytes;
  const kvCacheBytes = model.kvPerToken * contextLength;
  const computeBytes = model.computeBytes;
  const totalBytes = weightsBytes + kvCacheBytes + computeBytes;
  const ram = state.freeRamBytes;
  const vram = state.freeVramBytes;
  const layers = model.facts.layers!;
  let verdict: FitVerdict;
  if (totalBytes <= (vram ?? ram)) verdict = { kind: 'fits' };
  else if (vram !== null && totalBytes <= vram + ram) {
    verdict = { kind: 'gpuLayers', layers: Math.max(1, Math.floor((layers * vram) / totalBytes)), totalLayers: layers };
  } else verdict = { kind: 'tooLarge' };
  return {
    facts: { ...clone(model.facts), quantization: quant.quant }, contextLength, weightsBytes, kvCacheBytes, computeBytes, totalBytes,
    freeRamBytes: ram, freeVramBytes: vram, verdict,
  };
}

const tokenStatus = () => ({ stored: state.hubToken !== null, storage: state.hubToken !== null ? clone(state.hubTokenStorage) : null });

function setHubToken(token: string | null) {
  const trimmed = token?.trim() ?? '';
  if (trimmed === '') {
    state.hubToken = null;
    return tokenStatus();
  }
  if (trimmed === 'hf_wrong') {
    throw ipcError('hubAuth', 'Hugging Face refused the token (401 Unauthorized): check it at huggingface.co → Settings → Access Tokens');
  }
  state.hubToken = trimmed;
  return tokenStatus();
}

/** The hub's answer after its delay; offline (`hubOffline`), hearth-hub's network error. */
async function reach<T>(answer: () => T): Promise<T> {
  await delay(state.hubDelayMs);
  if (state.hubOffline) {
    throw ipcError('network', 'could not reach the model hub at https://huggingface.co: dns error: failed to lookup address information. Check the network connection');
  }
  return answer();
}

export const hubCommands = {
  hubSearch: (query) => reach(() => hubSearch(query)),
  hubRepoFiles: (repo) => reach(() => clone(hubModel(repo).quants)),
  hubFit: (repo, file, contextLength) => reach(() => hubFit(repo, file, contextLength)),
  // The backend's choice for this machine (hearth_hub::starter) is the fixture's: no rule restated here.
  starterModel: async () => clone(state.starter),
  hubTokenStatus: tokenStatus,
  setHubToken,
} satisfies Partial<Handlers>;
