// Shared by the model manager's browser tests (models*.test.mjs): the hub's repositories, downloads in each
// state, the library's rows, and the steps that open the panel, search and check a fit.
import { HF, mockState } from './harness.mjs';

export const SMOL = 'HuggingFaceTB/SmolLM2-135M-Instruct-GGUF';
export const SMOL_17 = 'bartowski/SmolLM2-1.7B-Instruct-GGUF';
export const QWEN = 'Qwen/Qwen2.5-7B-Instruct-GGUF';
export const GATED = 'meta-llama/Llama-3.2-1B-Instruct-GGUF';
export const BIG = 'unsloth/Llama-3.3-70B-Instruct-GGUF';
export const VISION = 'ggml-org/SmolVLM-256M-Instruct-GGUF';
export const GATED_MESSAGE =
  'meta-llama/Llama-3.2-1B-Instruct-GGUF is gated: accept its license on huggingface.co, then add your Hugging Face token in Models → Discover';
export const DISK_FULL = 'the download stopped: the disk is full (needs 1.1 GB more on /home). Free some space, then resume';
export const BROKEN_ERROR = 'broken.gguf is truncated: it ends at byte 4096 but its header needs at least byte 70231; download it again';
export const KEY_FILE = {
  kind: 'file',
  path: '/home/me/.local/share/hearth/provider-keys.json',
  reason: 'The keychain did not answer: org.freedesktop.secrets was not provided by any .service files.',
};
export const OUT_OF_MEMORY = {
  kind: 'engine',
  message: 'llama.cpp could not allocate the model (out of memory: 2.4 GB asked, 1.1 GB free); the model that was loaded stays loaded',
};

export const text = async (locator) => (await locator.textContent()).trim();
export const callsOf = async (page, cmd) => (await mockState(page)).calls.filter((c) => c.cmd === cmd).map((c) => c.payload);
export const mock = (page, key) => page.evaluate((k) => window.__hearthMock[k], key);
export const repo = (page, id) => page.locator(`[data-testid="hub-repo"][data-repo="${id}"]`);
export const quant = (page, id, q) => repo(page, id).locator(`[data-testid="hub-quant"][data-quant="${q}"]`);
export const download = (page, id) => page.locator(`[data-testid="download"][data-id="${id}"]`);
export const row = (page, path) => page.locator(`[data-testid="library-model"][data-path="${path}"]`);
export const downloadOf = (page, quantName) => page.locator('[data-testid="download"]').filter({ hasText: quantName });

export async function openModels(page, tab = 'library') {
  await page.getByTestId('open-models').click();
  await page.getByTestId('models-panel').waitFor();
  await page.getByTestId(`models-tab-${tab}`).click();
  await page.getByTestId(`models-tab-${tab}`).and(page.locator('[aria-selected="true"]')).waitFor();
}

export async function search(page, query, { enter = true } = {}) {
  await page.getByTestId('hub-search').fill(query);
  if (enter) await page.getByTestId('hub-search').press('Enter');
  else await page.getByTestId('hub-search-go').click();
  await page.getByTestId('hub-found').filter({ hasText: `for “${query}”` }).waitFor();
}

export async function openRepo(page, id) {
  await repo(page, id).getByTestId('open-repo').click();
  // Read: its quantizations, or why not.
  await repo(page, id).locator('[data-testid="hub-quant"], [data-testid="repo-error"]').first().waitFor();
}

/** Check the fit of `q` and wait for the verdict `verdict`. */
export async function checkFit(page, id, q, verdict) {
  await quant(page, id, q).getByTestId('check-fit').click();
  await quant(page, id, q).getByTestId('fit-verdict').filter({ hasText: verdict }).waitFor();
  await quant(page, id, q).locator('[data-testid="fit"][data-status="done"]').waitFor();
}

export const progressOf = async (card) => Number(await card.getByTestId('download-progress').getAttribute('aria-valuenow'));
export const stateOf = (card, state) => card.and(card.page().locator(`[data-state="${state}"]`)).waitFor({ timeout: 15_000 });

/** Downloads as the backend would list them after a restart, in each state. */
export function rememberedDownloads() {
  const d = (id, repo, q, file, state, doneBytes, totalBytes, over = {}) => ({
    id, repo, quant: q, files: [file], state, doneBytes, totalBytes, bytesPerSecond: 0, etaSeconds: null, attempt: 1, maxAttempts: 8,
    retryInS: null, error: null, modelPath: null, ...over,
  });
  return [
    d('dl-old-1', QWEN, 'Q4_K_M', 'qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf', 'running', 1_236_000_000, 4_683_073_184, {
      bytesPerSecond: 23.4e6, etaSeconds: 147,
    }),
    d('dl-old-2', SMOL_17, 'Q4_K_M', 'SmolLM2-1.7B-Instruct-Q4_K_M.gguf', 'retrying', 402_000_000, 1_055_609_824, { attempt: 2, retryInS: 30 }),
    d('dl-old-3', GATED, 'Q8_0', 'Llama-3.2-1B-Instruct-Q8_0.gguf', 'paused', 640_000_000, 1_321_083_008),
    d('dl-old-4', SMOL, 'Q4_1', 'smollm2-135m-instruct-q4_1.gguf', 'verifying', 98_402_592, 98_402_592),
    d('dl-old-5', SMOL_17, 'Q8_0', 'SmolLM2-1.7B-Instruct-Q8_0.gguf', 'failed', 910_207_472, 1_820_414_944, { error: DISK_FULL }),
    d('dl-old-6', SMOL, 'Q8_0', 'smollm2-135m-instruct-q8_0.gguf', 'done', 144_811_296, 144_811_296, {
      modelPath: `${HF}/models--HuggingFaceTB--SmolLM2-135M-Instruct-GGUF/snapshots/5b9e1a4c0f3e2d7c8a6b4e1f9d2c3a7b8e6f0d1c/smollm2-135m-instruct-q8_0.gguf`,
    }),
  ];
}
