import type { AttachProgress, Attachment } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { attachedFiles, stillReading, type PendingAttachment } from './attachments';
import { errorMessage, fileName } from './format';
import { browserReader, pastedName, type PastedFileReader } from './pasted-files';

/** What DraftAttachments asks of the backend. */
type AttachApi = Pick<HearthApi, 'attachFile' | 'attachBytes' | 'pickAttachments'>;

/**
 * The files attached to the message being typed (picked in the open dialog, dropped on the chat, or pasted):
 * each read by the backend (`attachFile` from its path, `attachBytes` from a paste's bytes), then sent with
 * the message, or refused with why. A pasted image's chip shows its thumbnail.
 */
export class DraftAttachments {
  items = $state<PendingAttachment[]>([]);
  /** What the next message carries. */
  attached = $derived(attachedFiles(this.items));
  reading = $derived(stillReading(this.items));

  readonly #api: AttachApi;
  readonly #changed: () => void;
  readonly #reader: PastedFileReader;
  #nextKey = 1;
  /** Unnamed files pasted so far: what numbers their names (`pasted-image-1.png`, `-2`, …). */
  #unnamed = 0;
  /** The thumbnails of the files last taken, by hash: a send that saved nothing gives them back with their files. */
  #takenPreviews = new Map<string, string>();

  /**
   * `changed`: the files the next message carries changed (one attached or removed). `reader`: how a pasted
   * file's bytes and thumbnail are read (the browser's way, but in unit tests).
   */
  constructor(api: AttachApi, changed: () => void = () => {}, reader: PastedFileReader = browserReader) {
    this.#api = api;
    this.#changed = changed;
    this.#reader = reader;
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
    await Promise.all(paths.map((path) => this.#attach(fileName(path), (indexed) => this.#api.attachFile(path, indexed))));
  }

  /**
   * Attach pasted files, each sent to the backend as its bytes (one without a name is named by its type:
   * `pasted-image-1.png`); an image the backend takes gets its thumbnail. Resolves once all are attached or
   * refused and the thumbnails drawn.
   */
  async paste(files: readonly File[]): Promise<void> {
    await Promise.all(
      files.map((file) => {
        const name = file.name || pastedName(file.type, ++this.#unnamed);
        return this.#attach(name, async (indexed) => this.#api.attachBytes(name, await this.#reader.base64(file), indexed), file);
      }),
    );
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
    this.#takenPreviews = new Map(
      this.items.flatMap((item) => (item.status === 'attached' && item.preview ? [[item.attachment.hash, item.preview] as const] : [])),
    );
    this.items = [];
    return files;
  }

  /** The thumbnails of the files last taken, by hash (the sent message's chips show them). */
  get takenPreviews(): ReadonlyMap<string, string> {
    return this.#takenPreviews;
  }

  /** A send that saved nothing gives its files back (before any attached since), with their thumbnails. */
  restore(files: readonly Attachment[]): void {
    const known = new Set(this.attached.map((a) => a.hash));
    const back = files
      .filter((a) => !known.has(a.hash))
      .map((attachment) => this.#attachedItem(attachment, this.#nextKey++, this.#takenPreviews.get(attachment.hash)));
    this.items = [...back, ...this.items];
  }

  /**
   * One file's chip: being read (`read`, the backend's answer; it tells how much of a long document is
   * indexed as it goes) until attached or refused; then, for an image
   * the backend took whose bytes are here (`pasted`), its thumbnail. The thumbnail is drawn only after the
   * backend read the image's header and took its size: a huge image is refused before it is decoded here.
   */
  async #attach(name: string, read: (indexed: (progress: AttachProgress) => void) => Promise<Attachment>, pasted?: Blob): Promise<void> {
    const key = this.#nextKey++;
    this.items.push({ key, status: 'reading', name });
    const indexed = ({ indexed }: AttachProgress) => {
      const item = this.items.find((i) => i.key === key);
      if (item?.status === 'reading') item.indexed = indexed;
    };
    let next: PendingAttachment | null;
    try {
      const attachment = await read(indexed);
      // The same content twice is one file to the model: the first chip stands for both.
      next = this.attached.some((a) => a.hash === attachment.hash) ? null : this.#attachedItem(attachment, key);
    } catch (e) {
      next = { key, status: 'refused', name, error: errorMessage(e) };
    }
    const index = this.items.findIndex((item) => item.key === key);
    if (index < 0) return; // removed while it was read
    if (next) this.items[index] = next;
    else this.items.splice(index, 1);
    if (next?.status !== 'attached') return;
    this.#changed();
    if (pasted && next.attachment.kind === 'image') await this.#drawPreview(key, pasted);
  }

  /** Shows the image's thumbnail on its chip once drawn, if the chip is still there (its image icon until then). */
  async #drawPreview(key: number, image: Blob): Promise<void> {
    const preview = await this.#reader.thumbnail(image);
    const item = this.items.find((i) => i.key === key);
    if (preview && item?.status === 'attached') item.preview = preview;
  }

  #attachedItem(attachment: Attachment, key: number, preview?: string): PendingAttachment {
    return { key, status: 'attached', name: attachment.name, attachment, ...(preview ? { preview } : {}) };
  }
}
