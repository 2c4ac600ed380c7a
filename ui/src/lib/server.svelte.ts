import type { ServerSettings, ServerStatus } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { SERVER_DEFAULTS } from '../ipc/contract';
import { errorFields, errorMessage } from './format';

/** What a refusal can be about: one of the settings, or the API key. */
export type ServerField = keyof ServerSettings | 'key';

export function isServerField(field: string): field is ServerField {
  return field === 'key' || field in SERVER_DEFAULTS;
}

/** How often the status is read while the Server tab is on show, so its requests stay live. */
export const SERVER_POLL_MS = 2000;

/** A new API key, made here: "sk-hearth-" and 128 random bits in hex. */
export function newServerKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `sk-hearth-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * The local OpenAI-compatible server: its settings, where it listens (or why it does not), whether
 * an API key is saved (the key itself never comes back), and the requests it answered.
 */
export class ServerStore {
  /** As the backend last said; null until read. */
  status = $state<ServerStatus | null>(null);
  /**
   * The settings on screen: those in force, those being saved (a switch moves at once), or a refused
   * port, which stays in its box, marked, to be fixed.
   */
  settings = $state<ServerSettings>({ ...SERVER_DEFAULTS });
  /** A read is under way. */
  loading = $state(false);
  /** A change of the settings or of the key is under way. */
  saving = $state(false);
  /** Why the last change was refused or failed; it stays (through the reads) until a change goes through. */
  error = $state<string | null>(null);
  /** What `error` is about (the backend's `IpcError.field`), to mark its control. */
  errorFields = $state<ServerField[]>([]);
  /** Why the last read failed; the next read that goes through clears it. */
  readError = $state<string | null>(null);

  readonly #api: HearthApi;
  /** Answers to an earlier request than the last are dropped. */
  #token = 0;
  #changes = 0;

  constructor(api: HearthApi) {
    this.#api = api;
  }

  /** Read the status again. */
  async refresh(): Promise<void> {
    if (this.#changes > 0) return; // the change answers with the status after it
    const token = ++this.#token;
    this.loading = true;
    try {
      const status = await this.#api.getServer();
      if (token !== this.#token) return;
      this.status = status;
      this.readError = null;
      // A refusal on screen keeps what was refused in view until the user fixes it.
      if (this.errorFields.length === 0) this.settings = { ...status.settings };
    } catch (e) {
      if (token === this.#token) this.readError = errorMessage(e);
    } finally {
      this.loading = false;
    }
  }

  /**
   * Read the status now and every SERVER_POLL_MS until the returned function is called (while the
   * Server tab is on show). The next read waits for the last one's answer, so they never pile up.
   */
  watch(): () => void {
    let watching = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async () => {
      await this.refresh();
      if (watching) timer = setTimeout(read, SERVER_POLL_MS);
    };
    void read();
    return () => {
      watching = false;
      clearTimeout(timer);
    };
  }

  /** Save the settings: the backend starts, moves or stops the server at once. True once saved. */
  set(settings: ServerSettings): Promise<boolean> {
    this.settings = { ...settings };
    return this.#change(() => this.#api.setServer(settings), settings);
  }

  /** Save the API key in the keychain (null removes it). True once saved. */
  setKey(key: string | null): Promise<boolean> {
    return this.#change(() => this.#api.setServerKey(key));
  }

  async #change(request: () => Promise<ServerStatus>, sent?: ServerSettings): Promise<boolean> {
    const token = ++this.#token;
    this.#changes += 1;
    this.saving = true;
    try {
      const status = await request();
      if (token === this.#token) {
        this.status = status;
        this.settings = { ...status.settings };
        this.error = null;
        this.errorFields = [];
      }
      return true;
    } catch (e) {
      if (token === this.#token) {
        this.error = errorMessage(e);
        this.errorFields = errorFields(e).filter(isServerField);
        // A refused switch goes back to what is in force; a refused port or list of origins stays to be fixed.
        const inForce = { ...(this.status?.settings ?? SERVER_DEFAULTS) };
        if (sent && this.errorFields.includes('port')) inForce.port = sent.port;
        if (sent && this.errorFields.includes('allowedOrigins')) inForce.allowedOrigins = [...sent.allowedOrigins];
        this.settings = inForce;
      }
      return false;
    } finally {
      this.#changes -= 1;
      this.saving = this.#changes > 0;
    }
  }
}
