// The model manager on the UI side, in words: sizes, speeds and times left, Hugging Face repositories,
// quantizations in order, the fit verdict, download states, the library's sources. Pure functions over
// plain values; the reactive stores are in hub.svelte.ts, downloads.svelte.ts and library.svelte.ts.
import type {
  Download,
  DownloadState,
  FieldRange,
  FitEstimate,
  HubTokenStatus,
  IpcErrorKind,
  LibraryModel,
  ModelFacts,
  ModelSource,
  ReasoningFormat,
  RepoQuant,
} from '../ipc/bindings';
import { FIT_CONTEXT_FALLBACK, LOAD_RANGES } from '../ipc/contract';
import { fileName, formatBytes, plural, relativeDate } from './format';
import { savedWhere } from './providers';
import { formatNumber, requiredRange } from './settings';

/** Bytes in words, "0 B" included (formatBytes leaves nothing for 0). */
export function bytesText(bytes: number): string {
  return formatBytes(bytes) || '0 B';
}

/** "23.4 MB/s"; '' when nothing is moving. */
export function speedText(bytesPerSecond: number): string {
  const size = formatBytes(bytesPerSecond);
  return size ? `${size}/s` : '';
}

/** "45 s left", "2 min left", "1 h 5 min left"; '' when unknown. Minutes are rounded up: never promise too soon. */
export function etaText(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return '';
  if (Math.ceil(seconds) < 60) return `${Math.max(1, Math.ceil(seconds))} s left`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 60) return `${minutes} min left`;
  if (minutes >= 24 * 60) return 'more than a day left';
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest === 0 ? `${hours} h left` : `${hours} h ${rest} min left`;
}

/** "135M", "1.7B", "8B", "71B": a model's parameter count as models are named. */
export function paramsText(count: number | null): string {
  if (count === null || !Number.isFinite(count) || count <= 0) return '';
  const units: [number, string][] = [
    [1e12, 'T'],
    [1e9, 'B'],
    [1e6, 'M'],
    [1e3, 'K'],
  ];
  for (const [size, unit] of units) {
    if (count >= size * 0.9995) {
      const value = count / size;
      return `${value < 9.95 ? Number(value.toFixed(1)) : Math.round(value)}${unit}`;
    }
  }
  return String(Math.round(count));
}

/** Downloads and likes as the hub shows them: "937", "48.2k", "1.2M". */
export function countText(n: number): string {
  if (!Number.isFinite(n) || n < 1000) return String(Math.max(0, Math.round(n || 0)));
  const [value, unit] = n < 999_500 ? [n / 1000, 'k'] : [n / 1e6, 'M'];
  return `${Number(value.toFixed(value < 99.95 ? 1 : 0))}${unit}`;
}

/** "updated 3 days ago"; '' when the hub did not say. */
export function updatedText(updatedAt: string | null, now: number = Date.now()): string {
  if (!updatedAt) return '';
  const at = Date.parse(updatedAt);
  return Number.isNaN(at) ? '' : `updated ${relativeDate(at, now)}`;
}

/** "48.2k downloads · 37 likes · updated 3 days ago". */
export function repoMeta(repo: { downloads: number; likes: number; updatedAt: string | null }, now: number = Date.now()): string {
  const parts = [`${countText(repo.downloads)} ${repo.downloads === 1 ? 'download' : 'downloads'}`];
  parts.push(`${countText(repo.likes)} ${repo.likes === 1 ? 'like' : 'likes'}`);
  const updated = updatedText(repo.updatedAt, now);
  if (updated) parts.push(updated);
  return parts.join(' · ');
}

/** A repository id split for display: the owner and the name. */
export function repoParts(id: string): { owner: string; name: string } {
  const at = id.indexOf('/');
  return at < 0 ? { owner: '', name: id } : { owner: id.slice(0, at), name: id.slice(at + 1) };
}

/** "3 parts" for a split GGUF; '' for one file. */
export function partsText(files: readonly string[]): string {
  return files.length > 1 ? `${files.length} parts` : '';
}

/** Bits per weight a quantization's name says (Q4_K_M → 4, IQ3_XXS → 3, F16/BF16 → 16, F32 → 32); null when unknown. */
export function quantBits(quant: string): number | null {
  const q = quant.toUpperCase();
  const float = /^(?:B?F)(16|32)$/.exec(q);
  if (float) return Number(float[1]);
  const m = /^(?:I?Q|TQ|MXFP)(\d)/.exec(q);
  return m ? Number(m[1]) : null;
}

/** Smallest first: by bits per weight, then by size; names the hub did not teach us last, by name. */
export function sortQuants(quants: readonly RepoQuant[]): RepoQuant[] {
  return [...quants].sort((a, b) => {
    const [x, y] = [quantBits(a.quant), quantBits(b.quant)];
    if (x !== y) return x === null ? 1 : y === null ? -1 : x - y;
    return a.sizeBytes - b.sizeBytes || a.quant.localeCompare(b.quant);
  });
}

export type FitTone = 'fits' | 'partial' | 'tooLarge';

/** The fit verdict in words, its colour, and the sum behind it. */
/** Bytes in one unit for a sum that reads at a glance: GB once the total is (0.1 GB under GB: 2 decimals), else whole MB. */
export function sumBytes(bytes: number, totalBytes: number): string {
  if (totalBytes >= 1e9) return `${(bytes / 1e9).toFixed(bytes > 0 && bytes < 0.1e9 ? 2 : 1)} GB`;
  return `${Math.round(bytes / 1e6)} MB`;
}

export function fitWords(fit: FitEstimate): { tone: FitTone; verdict: string; detail: string } {
  const tokens = fit.contextLength.toLocaleString('en');
  const b = (bytes: number) => sumBytes(bytes, fit.totalBytes);
  const sum =
    `weights ${b(fit.weightsBytes)} + KV cache ${b(fit.kvCacheBytes)} at ${tokens} tokens` +
    ` + compute ${b(fit.computeBytes)} = ${b(fit.totalBytes)}`;
  const free =
    fit.freeVramBytes === null
      ? `${bytesText(fit.freeRamBytes)} free RAM`
      : `${bytesText(fit.freeVramBytes)} free VRAM and ${bytesText(fit.freeRamBytes)} free RAM`;
  const detail = `${sum} of ${free}`;
  switch (fit.verdict.kind) {
    case 'fits':
      return { tone: 'fits', verdict: 'Fits in memory', detail };
    case 'gpuLayers':
      return { tone: 'partial', verdict: `Fits with ${fit.verdict.layers} of ${fit.verdict.totalLayers} layers on GPU`, detail };
    case 'tooLarge':
      return { tone: 'tooLarge', verdict: 'Too large for this machine', detail };
  }
}

/** The context length a fit starts from: the model's own, or the backend's assumption when its header does not say. */
export function defaultFitContext(facts: ModelFacts): number {
  return facts.contextLength && facts.contextLength > 0 ? facts.contextLength : FIT_CONTEXT_FALLBACK;
}

/** The context lengths a fit may be checked at: those a model may be loaded with (the load settings' nCtx). */
export const FIT_CONTEXT_RANGE: FieldRange = requiredRange(LOAD_RANGES, 'nCtx');

/** Why `tokens` is no context length to check a fit at; null when it is one. */
export function fitContextProblem(tokens: number): string | null {
  const { min, max } = FIT_CONTEXT_RANGE;
  if (Number.isInteger(tokens) && tokens >= min && tokens <= max) return null;
  return `The context length is a whole number of tokens, between ${formatNumber(min)} and ${formatNumber(max)}.`;
}

export type Fact = { key: keyof ModelFacts; label: string; value: string };

/**
 * What a GGUF header says, as values that read on their own ("3.2B parameters", "131,072-token context",
 * "no chat template") with their labels; unknown ones are left out (the chat template never is, but for an
 * embedding model, which is said to be one instead).
 */
export function factsList(facts: ModelFacts): Fact[] {
  const list: Fact[] = [];
  if (facts.architecture) list.push({ key: 'architecture', label: 'Architecture', value: facts.architecture });
  const params = paramsText(facts.parameters);
  if (params) list.push({ key: 'parameters', label: 'Parameters', value: `${params} parameters` });
  if (facts.quantization) list.push({ key: 'quantization', label: 'Quantization', value: facts.quantization });
  if (facts.contextLength) {
    list.push({ key: 'contextLength', label: 'Context length', value: `${facts.contextLength.toLocaleString('en')}-token context` });
  }
  // An embedding model does not chat: what it is for stands where a chat model's template would.
  if (facts.embedding) list.push({ key: 'embedding', label: 'Kind', value: 'embedding model, for search by meaning' });
  else list.push({ key: 'hasChatTemplate', label: 'Chat template', value: facts.hasChatTemplate ? 'chat template' : 'no chat template' });
  const reasoning = reasoningText(facts.reasoning);
  if (reasoning) list.push({ key: 'reasoning', label: 'Reasoning', value: reasoning });
  return list;
}

/** What a model's template says of its reasoning, in words; null where it has none. */
function reasoningText(format: ReasoningFormat): string | null {
  switch (format.kind) {
    case 'thinkTags':
      return format.switchable ? 'reasons, can be switched off' : 'reasons';
    case 'channels':
      return 'reasons in channels';
    case 'none':
      return null;
  }
}

/** The states a download can still leave by itself (paused ones wait for the user, and count too). */
const ACTIVE: readonly DownloadState[] = ['queued', 'running', 'paused', 'retrying', 'verifying'];
export function isActive(download: Pick<Download, 'state'>): boolean {
  return ACTIVE.includes(download.state);
}

/** Done so far, in percent (0–100, whole); a finished download is 100. */
export function downloadPercent(d: Pick<Download, 'state' | 'doneBytes' | 'totalBytes'>): number {
  if (d.state === 'done') return 100;
  if (!(d.totalBytes > 0)) return 0;
  return Math.max(0, Math.min(100, Math.floor((d.doneBytes / d.totalBytes) * 100)));
}

/**
 * What a download is doing, in words. `retryIn`: seconds until a retrying download tries again, as
 * counted down here (the backend's `retryInS` was true when it was sent).
 */
export function downloadStateText(d: Download, retryIn: number | null = d.retryInS): string {
  switch (d.state) {
    case 'queued':
      return 'Queued';
    case 'running':
      return 'Downloading';
    case 'paused':
      return 'Paused';
    case 'retrying': {
      const attempt = `attempt ${d.attempt} of ${d.maxAttempts}`;
      return retryIn !== null && retryIn > 0 ? `Retrying in ${retryIn} s (${attempt})…` : `Retrying (${attempt})…`;
    }
    case 'verifying':
      return 'Verifying (checksum)…';
    case 'done':
      return 'Done';
    case 'failed':
      return 'Failed';
    case 'cancelled':
      return 'Cancelled';
  }
}

/** "1.2 GB of 4.1 GB · 23.4 MB/s · 2 min left": speed and time left only while bytes are moving. */
export function downloadDetail(d: Download): string {
  if (d.state === 'done') return bytesText(d.totalBytes);
  if (d.state === 'cancelled') return 'The partial file was deleted.';
  const parts = [`${bytesText(d.doneBytes)} of ${bytesText(d.totalBytes)}`];
  if (d.state === 'running') {
    const speed = speedText(d.bytesPerSecond);
    if (speed) parts.push(speed);
    const eta = etaText(d.etaSeconds);
    if (eta) parts.push(eta);
  }
  return parts.join(' · ');
}

/** Where a library file comes from. */
export const SOURCE_LABELS: Record<ModelSource, string> = {
  hubCache: 'Hugging Face cache',
  modelsFolder: 'Hearth folder',
  linked: 'imported (linked)',
  copied: 'imported (copied)',
};

/** What deleting a library entry does: a linked file is only forgotten, any other is deleted. */
export function deleteWords(model: Pick<LibraryModel, 'source' | 'sizeBytes'>): { button: string; question: string; confirm: string } {
  if (model.source === 'linked') return { button: 'Remove', question: 'Remove from library (the file stays)?', confirm: 'Remove' };
  const size = formatBytes(model.sizeBytes);
  return { button: 'Delete', question: size ? `Delete this model file (${size})?` : 'Delete this model file?', confirm: 'Delete' };
}

/** Where the Hugging Face token is, in words, as a provider's key is said. */
export function tokenStorageText(status: HubTokenStatus): { text: string; warn: boolean } {
  if (status.stored && status.storage) return savedWhere(status.storage, 'token');
  return { text: 'No token saved: public models need none.', warn: false };
}

export function isGguf(path: string): boolean {
  return /\.gguf$/i.test(path);
}

/** What an import of dropped or picked files came to. */
export type ImportResult = { imported: LibraryModel[]; failed: { path: string; error: string }[]; skipped: string[] };

/** The import's outcome in words: what came in, what failed and why, what was not a GGUF file. */
export function importText(result: ImportResult): { tone: 'done' | 'error'; text: string } {
  const { imported, failed, skipped } = result;
  const parts: string[] = [];
  if (imported.length === 1) parts.push(`Imported ${imported[0].name}.`);
  else if (imported.length > 1) parts.push(`Imported ${plural(imported.length, 'model')}.`);
  for (const f of failed) parts.push(`${fileName(f.path)} was not imported: ${f.error}${/[.!?]$/.test(f.error) ? '' : '.'}`);
  if (skipped.length > 0) {
    const names = skipped.map(fileName).join(', ');
    parts.push(`Only .gguf files can be imported: ${names} ${skipped.length === 1 ? 'was' : 'were'} skipped.`);
  }
  if (parts.length === 0) parts.push('Nothing to import.');
  return { tone: imported.length > 0 && failed.length === 0 ? 'done' : 'error', text: parts.join(' ') };
}

/**
 * A backend message shown on its own: its first letter upper-case when it starts with a plain word
 * ("the download stopped…"), as it is when it starts with a name ("broken.gguf is…", "meta-llama/…").
 */
export function messageText(text: string): string {
  return /^[a-z]+\b(?![./\-_:])/.test(text) ? text.charAt(0).toUpperCase() + text.slice(1) : text;
}

/** The `kind` of an IpcError, when it is one (the hub's kinds included). */
export function errorKind(error: unknown): IpcErrorKind | null {
  const kind = error && typeof error === 'object' ? (error as { kind?: unknown }).kind : undefined;
  return typeof kind === 'string' ? (kind as IpcErrorKind) : null;
}

/** A turn that failed readying its chat's model: the backend says its error concerns the `model`. */
export function isModelProblem(error: unknown): boolean {
  return errorKind(error) !== null && (error as { field?: unknown }).field === 'model';
}
