// Signed updates, as src-tauri's updates.rs answers them: this build's key and settings, a newer
// version found or none (`updateAvailable`), a check that fails (`updateCheckFailure`), and an install
// that reports its download and restarts (`updateRestarted`), tries again after a cut
// (`updateCutOnce`), or fails in the backend's words (`updateInstallFailure`). Which endpoints the backend refuses is its rule: a test that wants a refusal
// names it (`updateRefusal`).
import type { UpdateStatus } from '../../../src/ipc/bindings';
import type { Handlers } from './ipc';
import { state } from './state';
import { clone, delay } from './util';

const status = (): UpdateStatus => clone({ settings: state.updateSettings, enabled: state.updateEnabled, currentVersion: state.updateCurrent });
/** What the fake package weighs, in bytes, and in how many steps it arrives. */
const PACKAGE_BYTES = 48_210_000;
const STEPS = 12;

export const updateCommands = {
  updateStatus: async () => status(),
  setUpdateSettings: async (settings) => {
    if (state.updateRefusal) throw clone(state.updateRefusal);
    state.updateSettings = clone(settings);
    return status();
  },
  checkUpdate: async () => {
    await delay(state.hubDelayMs);
    if (state.updateCheckFailure) throw clone(state.updateCheckFailure);
    return clone(state.updateAvailable);
  },
  installUpdate: async (onProgress) => {
    const tries = state.updateCutOnce ? 2 : 1;
    for (let attempt = 1; attempt <= tries; attempt++) {
      // A cut try stops halfway; the next starts from nothing.
      const steps = attempt < tries ? STEPS / 2 : STEPS;
      for (let step = 1; step <= steps; step++) {
        await delay(state.updateTickMs);
        onProgress.send({ stage: 'downloading', downloaded: Math.round((PACKAGE_BYTES * step) / STEPS), total: PACKAGE_BYTES, attempt });
      }
    }
    if (state.updateInstallFailure) throw clone(state.updateInstallFailure);
    onProgress.send({ stage: 'installing' });
    await delay(state.updateTickMs * 3);
    // The backend restarts Hearth here: the command never answers.
    state.updateRestarted = true;
    return new Promise<null>(() => {});
  },
} satisfies Partial<Handlers>;
