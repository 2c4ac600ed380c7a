import type { ExportFormat, ImportReport } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import type { ChatStore } from './chat.svelte';
import { errorMessage } from './format';

/** How long "Exported to …" stays in view; the time starts again when the pointer or focus leaves it. */
export const NOTICE_MS = 6000;

/** What exports and imports need of the chat screen: its error banner, and its chat list. */
export type TransferHost = Pick<ChatStore, 'error' | 'showError' | 'dismissError' | 'chatsAdded'>;

/**
 * Export and import of chats. The backend opens the system's file dialogs itself, so a call waits
 * on the user; a second one while a dialog is open is ignored. A cancelled dialog changes nothing
 * on screen, and a failure goes to the error banner word for word.
 */
export class TransferStore {
  /** "Exported to <path>", until it times out or is dismissed. */
  notice = $state<string | null>(null);
  /** The last import's outcome, until dismissed. */
  report = $state<ImportReport | null>(null);
  /** A file dialog is open, or its file is being written or read. */
  working = $state(false);

  readonly #api: Pick<HearthApi, 'exportChats' | 'importChats'>;
  readonly #host: TransferHost;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #held = false;
  /** The banner's text when it shows this store's last failure. */
  #failure: string | null = null;

  constructor(api: Pick<HearthApi, 'exportChats' | 'importChats'>, host: TransferHost) {
    this.#api = api;
    this.#host = host;
  }

  /** Export chats `chatIds` (every chat when null); true once a file was written. */
  exportChats(chatIds: number[] | null, format: ExportFormat): Promise<boolean> {
    return this.#run(
      () => this.#api.exportChats(chatIds, format),
      (path) => this.#showNotice(`Exported to ${path}`),
    );
  }

  /** Import an export file: the report is shown and the chat list read again. True once a file was read. */
  importChats(): Promise<boolean> {
    return this.#run(
      () => this.#api.importChats(),
      (report) => {
        this.report = report;
        return this.#host.chatsAdded();
      },
    );
  }

  dismissNotice(): void {
    this.#held = false;
    this.#stopTimer();
    this.notice = null;
  }

  /** While held (the pointer or focus on it) the notice stays; once let go it waits NOTICE_MS again. */
  holdNotice(held: boolean): void {
    this.#held = held;
    this.#stopTimer();
    if (!held && this.notice !== null) this.#startTimer();
  }

  dismissReport(): void {
    this.report = null;
  }

  async #run<T>(request: () => Promise<T | null>, done: (answer: T) => void | Promise<void>): Promise<boolean> {
    if (this.working) return false;
    this.working = true;
    // Trying again: the banner's word on the last attempt is out of date.
    if (this.#failure !== null && this.#host.error === this.#failure) this.#host.dismissError();
    this.#failure = null;
    try {
      const answer = await request();
      if (answer === null) return false;
      await done(answer);
      return true;
    } catch (e) {
      this.#failure = errorMessage(e);
      this.#host.showError(e);
      return false;
    } finally {
      this.working = false;
    }
  }

  #showNotice(text: string): void {
    this.notice = text;
    this.#stopTimer();
    if (!this.#held) this.#startTimer();
  }

  #startTimer(): void {
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.notice = null;
    }, NOTICE_MS);
  }

  #stopTimer(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
