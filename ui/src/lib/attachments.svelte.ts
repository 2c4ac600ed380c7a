import type { Attachment } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { attachedFiles, stillReading, type PendingAttachment } from './attachments';
import { errorMessage, fileName } from './format';

/**
 * The files attached to the message being typed (picked in the open dialog or dropped on the chat):
 * each read by the backend (`attachFile`), then sent with the message, or refused with why.
 */
export class DraftAttachments {
  items = $state<PendingAttachment[]>([]);
  /** What the next message carries. */
  attached = $derived(attachedFiles(this.items));
  reading = $derived(stillReading(this.items));

  readonly #api: Pick<HearthApi, 'attachFile' | 'pickAttachments'>;
  readonly #changed: () => void;
  #nextKey = 1;

  /** `changed`: the files the next message carries changed (one attached or removed). */
  constructor(api: Pick<HearthApi, 'attachFile' | 'pickAttachments'>, changed: () => void = () => {}) {
    this.#api = api;
    this.#changed = changed;
  }

  /**
   * The system's open dialog; the files picked are attached (none when it was cancelled). Resolves once
   * the dialog closed: the files are read on meanwhile, each showing as being read.
   */
  async pick(): Promise<void> {
    let paths: string[];
    try {
      paths = await this.#api.pickAttachments();
    } catch (e) {
      this.items.push({ key: this.#nextKey++, status: 'refused', name: '', error: `Could not open the file dialog: ${errorMessage(e)}` });
      return;
    }
    void this.add(paths);
  }

  /** Attach the files at `paths`, each read in turn by the backend; resolves once all are attached or refused. */
  async add(paths: readonly string[]): Promise<void> {
    await Promise.all(paths.map((path) => this.#attach(path)));
  }

  /** Take a file off the message (or dismiss a refusal); one still being read is dropped when it arrives. */
  remove(key: number): void {
    const wasAttached = this.items.some((item) => item.key === key && item.status === 'attached');
    this.items = this.items.filter((item) => item.key !== key);
    if (wasAttached) this.#changed();
  }

  /** The attached files for the message being sent, which leave the composer with their chips. */
  take(): Attachment[] {
    const files = $state.snapshot(this.attached);
    this.items = [];
    return files;
  }

  /** A send that saved nothing gives its files back (before any attached since). */
  restore(files: readonly Attachment[]): void {
    const known = new Set(this.attached.map((a) => a.hash));
    const back = files.filter((a) => !known.has(a.hash)).map((attachment) => this.#attachedItem(attachment));
    this.items = [...back, ...this.items];
  }

  async #attach(path: string): Promise<void> {
    const key = this.#nextKey++;
    const name = fileName(path);
    this.items.push({ key, status: 'reading', name });
    let next: PendingAttachment | null;
    try {
      const attachment = await this.#api.attachFile(path);
      // The same content twice is one file to the model: the first chip stands for both.
      next = this.attached.some((a) => a.hash === attachment.hash) ? null : this.#attachedItem(attachment, key);
    } catch (e) {
      next = { key, status: 'refused', name, error: errorMessage(e) };
    }
    const index = this.items.findIndex((item) => item.key === key);
    if (index < 0) return; // removed while it was read
    if (next) this.items[index] = next;
    else this.items.splice(index, 1);
    if (next?.status === 'attached') this.#changed();
  }

  #attachedItem(attachment: Attachment, key = this.#nextKey++): PendingAttachment {
    return { key, status: 'attached', name: attachment.name, attachment };
  }
}
