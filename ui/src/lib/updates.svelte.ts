import type { AvailableUpdate, UpdateProgress, UpdateSettings, UpdateStatus } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { errorMessage } from './format';
import { bytesText, errorKind } from './models';

/** An install under way: where it is, or why it stopped (the running version untouched). */
export type Install = { progress: UpdateProgress | null; error: string | null };

/**
 * Signed updates: Settings → Updates (check at start, the endpoint), the check, and the dialog's
 * install with its progress. The backend checks the signature and restarts Hearth once installed.
 */
export class UpdatesStore {
  status = $state<UpdateStatus | null>(null);
  /** A newer version the last check found; the dialog shows it until dismissed. */
  available = $state<AvailableUpdate | null>(null);
  dismissed = $state(false);
  checking = $state(false);
  /** What the last check said, in words (Settings → Updates), and why Save was refused. */
  checked = $state<{ tone: 'done' | 'error'; text: string } | null>(null);
  saveError = $state<string | null>(null);
  install = $state<Install | null>(null);

  readonly #api: HearthApi;

  constructor(api: HearthApi) {
    this.#api = api;
  }

  async refresh(): Promise<void> {
    try {
      this.status = await this.#api.updateStatus();
    } catch (e) {
      this.checked = { tone: 'error', text: errorMessage(e) };
    }
  }

  /** At start: a check when the user leaves it on and this build updates itself; a failure stays quiet (Settings says it). */
  async atStart(): Promise<void> {
    await this.refresh();
    const status = this.status;
    if (status?.enabled && status.settings.checkAtStart && status.settings.endpoint.trim()) await this.check();
  }

  /** Ask the endpoint; a newer version opens the dialog. */
  async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const found = await this.#api.checkUpdate();
      this.available = found;
      this.dismissed = false;
      this.checked = found
        ? { tone: 'done', text: `Hearth ${found.version} is available.` }
        : { tone: 'done', text: `Hearth ${this.status?.currentVersion ?? ''} is the newest version.`.replace('  ', ' ') };
    } catch (e) {
      this.checked = { tone: 'error', text: errorMessage(e) };
    } finally {
      this.checking = false;
    }
  }

  async save(settings: UpdateSettings): Promise<boolean> {
    try {
      this.status = await this.#api.setUpdateSettings(settings);
      this.saveError = null;
      return true;
    } catch (e) {
      this.saveError = errorKind(e) === 'invalidInput' ? errorMessage(e) : `Not saved: ${errorMessage(e)}`;
      return false;
    }
  }

  /** Download, verify, install; the backend restarts Hearth, so a success is never answered. */
  async installNow(): Promise<void> {
    if (this.install && !this.install.error) return;
    this.install = { progress: null, error: null };
    try {
      await this.#api.installUpdate((progress) => {
        if (this.install) this.install.progress = progress;
      });
    } catch (e) {
      this.install = { progress: null, error: errorMessage(e) };
    }
  }

  dismiss(): void {
    this.dismissed = true;
    if (this.install?.error) this.install = null;
  }
}

/** Where an install is, in words. */
export function installStateText(progress: UpdateProgress | null): string {
  if (!progress) return 'Starting the download…';
  if (progress.stage === 'installing') return 'Signature checked. Installing… (your system may ask for your password)';
  const size = `${bytesText(progress.downloaded)}${progress.total ? ` of ${bytesText(progress.total)}` : ''}`;
  return progress.attempt > 1 ? `The download was cut off; downloading again (try ${progress.attempt})… ${size}` : `Downloading… ${size}`;
}

/** How far a download got, in percent (null: the server gave no size). */
export function installPercent(progress: UpdateProgress | null): number | null {
  if (!progress || progress.stage !== 'downloading') return progress?.stage === 'installing' ? 100 : 0;
  return progress.total ? Math.min(100, Math.round((progress.downloaded / progress.total) * 100)) : null;
}
