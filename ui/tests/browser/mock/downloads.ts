// Downloads from Hugging Face, advancing on timers that stand in for the network and reported to
// `watch_downloads` channels: a step per tick (`downloadTickMs`, `downloadSteps`, `downloadSpeed` as a real link
// would report it), trouble on the way (`downloadTrouble`: a dropped connection, retried after `retryWaitS`; a full
// disk), pause, resume and cancel, and once verified, the file in the library. `downloads` are those persisted.
import type { Download, ModelFacts } from '../../../src/ipc/bindings';
import { GB, HF_CACHE, HUB_MODELS } from './fixtures';
import { hubModel } from './hub';
import type { Handlers, Sink } from './ipc';
import { state } from './state';
import { clone, ipcError } from './util';

const DISK_FULL = 'the download stopped: the disk is full (needs 1.1 GB more on /home). Free some space, then resume';

const watchers: Sink<Download>[] = [];
const timers = new Map<string, ReturnType<typeof setTimeout>>();
let nextDownload = 1;

function findDownload(id: string) {
  const d = state.downloads.find((x) => x.id === id);
  if (!d) throw ipcError('notFound', `no download ${id}`);
  return d;
}

function publish(d: Download) {
  for (const w of watchers) w.send(d);
}

function snapshotPath(d: Download) {
  const [owner, name] = d.repo.split('/');
  return `${HF_CACHE}/models--${owner}--${name}/snapshots/5b9e1a4c0f3e2d7c8a6b4e1f9d2c3a7b8e6f0d1c/${d.files[0]}`;
}

function stopTimer(d: Download) {
  clearTimeout(timers.get(d.id));
  timers.delete(d.id);
}

function after(d: Download, ms: number, step: () => void) {
  stopTimer(d);
  timers.set(
    d.id,
    setTimeout(() => {
      timers.delete(d.id);
      step();
    }, ms),
  );
}

/** One tick of a running download: more bytes, or trouble, or the checksum and the library. */
function advance(d: Download) {
  const trouble = state.downloadTrouble[`${d.repo}:${d.quant}`] ?? {};
  const next = Math.min(d.totalBytes, d.doneBytes + Math.ceil(d.totalBytes / state.downloadSteps));
  const crossed = (at: number | undefined) => at !== undefined && d.doneBytes < at * d.totalBytes && next >= at * d.totalBytes;
  if (crossed(trouble.dropAt) && !trouble.dropped) {
    trouble.dropped = true;
    Object.assign(d, { state: 'retrying', bytesPerSecond: 0, etaSeconds: null, attempt: d.attempt + 1, retryInS: state.retryWaitS } satisfies Partial<Download>);
    publish(d);
    after(d, state.retryWaitS * 1000, () => {
      Object.assign(d, { state: 'running', retryInS: null } satisfies Partial<Download>);
      publish(d);
      after(d, state.downloadTickMs, () => advance(d));
    });
    return;
  }
  if (crossed(trouble.diskFullAt) && !trouble.failed) {
    trouble.failed = true;
    Object.assign(d, {
      state: 'failed', doneBytes: Math.floor(trouble.diskFullAt! * d.totalBytes), bytesPerSecond: 0, etaSeconds: null, error: DISK_FULL,
    } satisfies Partial<Download>);
    publish(d);
    return;
  }
  d.doneBytes = next;
  if (next < d.totalBytes) {
    Object.assign(d, { state: 'running', bytesPerSecond: state.downloadSpeed, etaSeconds: (d.totalBytes - next) / state.downloadSpeed } satisfies Partial<Download>);
    publish(d);
    after(d, state.downloadTickMs, () => advance(d));
    return;
  }
  Object.assign(d, { state: 'verifying', bytesPerSecond: 0, etaSeconds: null } satisfies Partial<Download>);
  publish(d);
  after(d, 3 * state.downloadTickMs, () => {
    d.state = 'done';
    const path = (d.modelPath = snapshotPath(d));
    // (A download of a repository the hub no longer lists keeps only its quantization.)
    const facts = { ...clone(HUB_MODELS[d.repo]?.facts ?? {}), quantization: d.quant } as ModelFacts;
    if (!state.library.some((m) => m.path === path)) {
      state.library.push({
        path, name: d.files[0].replace(/(-0000\d-of-0000\d)?\.gguf$/, ''), source: 'hubCache', repo: d.repo,
        sizeBytes: d.totalBytes, facts, error: null,
      });
    }
    publish(d);
  });
}

function startDownload(repo: string, quantName: string, files: string[]) {
  const quant = hubModel(repo).quants.find((q) => q.quant === quantName);
  if (!quant || JSON.stringify(quant.files) !== JSON.stringify(files)) {
    throw ipcError('notFound', `${repo} has no quantization ${quantName} with those files`);
  }
  if (quant.sizeBytes > 20 * GB) {
    throw ipcError(
      'diskFull',
      `not enough disk space for ${repo} ${quantName}: it needs ${(quant.sizeBytes / GB).toFixed(1)} GB and /home has 20.3 GB free`,
    );
  }
  const d: Download = {
    id: `dl-${nextDownload++}`, repo, quant: quantName, files: clone(files), state: 'queued', doneBytes: 0,
    totalBytes: quant.sizeBytes, bytesPerSecond: 0, etaSeconds: null, attempt: 1, maxAttempts: 8, retryInS: null, error: null, modelPath: null,
  };
  state.downloads.push(d);
  after(d, 2 * state.downloadTickMs, () => advance(d));
  return clone(d);
}

function pauseDownload(id: string) {
  const d = findDownload(id);
  if (!['queued', 'running', 'retrying'].includes(d.state)) throw ipcError('invalidInput', `this download is ${d.state}: there is nothing to pause`);
  stopTimer(d);
  Object.assign(d, { state: 'paused', bytesPerSecond: 0, etaSeconds: null, retryInS: null } satisfies Partial<Download>);
  publish(d);
  return clone(d);
}

function resumeDownload(id: string) {
  const d = findDownload(id);
  if (!['paused', 'failed'].includes(d.state)) throw ipcError('invalidInput', `this download is ${d.state}: there is nothing to resume`);
  Object.assign(d, { state: 'queued', error: null, attempt: d.state === 'failed' ? 1 : d.attempt } satisfies Partial<Download>);
  publish(d);
  after(d, state.downloadTickMs, () => advance(d));
  return clone(d);
}

function cancelDownload(id: string) {
  const d = findDownload(id);
  if (['done', 'cancelled'].includes(d.state)) throw ipcError('invalidInput', `this download is ${d.state}`);
  stopTimer(d);
  Object.assign(d, { state: 'cancelled', doneBytes: 0, bytesPerSecond: 0, etaSeconds: null, retryInS: null } satisfies Partial<Download>);
  setTimeout(() => publish(d), 20);
  return null;
}

export const downloadCommands = {
  startDownload,
  listDownloads: () => clone(state.downloads),
  watchDownloads: (onUpdate) => {
    watchers.push(onUpdate);
    return null;
  },
  pauseDownload,
  resumeDownload,
  cancelDownload,
} satisfies Partial<Handlers>;
