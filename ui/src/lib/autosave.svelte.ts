import { errorFields, errorMessage, type FieldProblem } from './format';

/** Edits are saved this long after the last change. */
export const SAVE_DEBOUNCE_MS = 300;

/**
 * - `idle`: nothing edited since loading; `pending`: an edit waits for the debounce;
 * - `saving` / `saved`: the backend has / has accepted the values;
 * - `rejected`: the backend refused them (`error` says why);
 * - `unfinished`: an edit the backend would only refuse (`error` says what to finish), not sent.
 * `errorFields` names the fields `error` is about (the backend's `IpcError.field`, or the unfinished one).
 */
export type SaveStatus = 'idle' | 'pending' | 'saving' | 'saved' | 'rejected' | 'unfinished';

/** The word next to a form for its save status; empty before any edit. */
export function saveStatusText(status: SaveStatus): string {
  switch (status) {
    case 'pending':
    case 'saving':
      return 'Saving…';
    case 'saved':
      return 'Saved';
    case 'rejected':
    case 'unfinished':
      return 'Not saved';
    default:
      return '';
  }
}

export type AutoSaveOptions<T, R> = {
  /** The values to send, snapshotted now; null when there is nothing to send. */
  read: () => T | null;
  send: (value: T) => Promise<R>;
  /** Why `value` cannot be sent as it is (an edit the backend would only refuse), and where; null when it can. */
  unfinished?: (value: T) => FieldProblem | null;
  /** Every accepted save's answer, also one that newer edits overtook (what it saved is saved). */
  saved?: (answer: R, sent: T) => void;
};

/**
 * Saves what is on screen a short pause after the last edit: one request at a time, the latest
 * values last, and only the latest answer decides `status` and `error`.
 */
export class AutoSave<T, R = unknown> {
  status = $state<SaveStatus>('idle');
  /** Why the on-screen values are not saved; null while they are (or are about to be). */
  error = $state<string | null>(null);
  /** The fields `error` is about (top-level names); empty when it names none. */
  errorFields = $state<string[]>([]);

  readonly #options: AutoSaveOptions<T, R>;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #inFlight: Promise<void> | null = null;
  #again = false;

  constructor(options: AutoSaveOptions<T, R>) {
    this.#options = options;
  }

  /** True while an edit has not reached the backend yet. */
  get pending(): boolean {
    return this.#timer !== null || this.#inFlight !== null;
  }

  /** The values on screen changed: save them after the pause. */
  edited(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.status = 'pending';
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#save();
    }, SAVE_DEBOUNCE_MS);
  }

  /** Save now instead of after the pause; resolves when the backend has answered. */
  async flush(): Promise<void> {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
      await this.#save();
    } else if (this.#inFlight) {
      await this.#inFlight;
    }
  }

  /**
   * The on-screen values were replaced from the backend: forget a save not sent yet and any error.
   * Callers flush first when an edit must not be lost.
   */
  discard(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.status = 'idle';
    this.#setError(null, []);
  }

  #setError(error: string | null, fields: string[]): void {
    this.error = error;
    this.errorFields = fields;
  }

  #latest(): boolean {
    return !this.#again && this.#timer === null;
  }

  #save(): Promise<void> {
    if (this.#inFlight) {
      this.#again = true;
      return this.#inFlight;
    }
    const run = async () => {
      do {
        this.#again = false;
        const value = this.#options.read();
        if (value === null) return;
        const unfinished = this.#options.unfinished?.(value) ?? null;
        if (unfinished) {
          this.status = 'unfinished';
          this.#setError(unfinished.message, [unfinished.field]);
          return;
        }
        this.status = 'saving';
        try {
          const answer = await this.#options.send(value);
          this.#options.saved?.(answer, value);
          if (this.#latest()) {
            this.status = 'saved';
            this.#setError(null, []);
          }
        } catch (e) {
          if (this.#latest()) {
            this.status = 'rejected';
            this.#setError(errorMessage(e), errorFields(e));
          }
        }
      } while (this.#again);
    };
    this.#inFlight = run().finally(() => {
      this.#inFlight = null;
    });
    return this.#inFlight;
  }
}
