import { SvelteMap } from 'svelte/reactivity';
import type { HearthApi } from '../ipc/client';
import { browserReader, type PastedFileReader } from './pasted-files';

/** What SentThumbnails asks of the backend. */
type ImageApi = Pick<HearthApi, 'getAttachedImage'>;

/**
 * The thumbnails on sent messages' image chips, by the image's hash: handed over by the composer as its message
 * is sent, or drawn once here from the image the backend keeps, asked for when a chip first wants it (a chat
 * opened again, after a restart). An image too large to draw from, or one that cannot be read or drawn, keeps
 * its icon; it is not asked for again.
 */
export class SentThumbnails {
  readonly #drawn = new SvelteMap<string, string>();
  /** Hashes asked for (or handed over) already: each image is fetched and drawn once. */
  readonly #asked = new Set<string>();
  readonly #api: ImageApi;
  readonly #reader: Pick<PastedFileReader, 'thumbnail'>;

  constructor(api: ImageApi, reader: Pick<PastedFileReader, 'thumbnail'> = browserReader) {
    this.#api = api;
    this.#reader = reader;
  }

  /** The thumbnail of the image under `hash` (a `data:` URL) once drawn; undefined until then, or when none can be. */
  of = (hash: string): string | undefined => {
    if (!this.#asked.has(hash)) {
      this.#asked.add(hash);
      // Drawn after this read: a chip's render never writes what it reads.
      queueMicrotask(() => void this.#draw(hash));
    }
    return this.#drawn.get(hash);
  };

  /** Thumbnails drawn already (the composer's, for the files of the message being sent), by hash. */
  keep(previews: ReadonlyMap<string, string>): void {
    for (const [hash, preview] of previews) {
      this.#asked.add(hash);
      this.#drawn.set(hash, preview);
    }
  }

  async #draw(hash: string): Promise<void> {
    let base64: string | null;
    try {
      base64 = await this.#api.getAttachedImage(hash);
    } catch {
      return; // let go of, or not an image: the chip's icon says enough
    }
    if (base64 === null) return; // too large to draw a thumbnail from
    const preview = await this.#reader.thumbnail(new Blob([bytesOf(base64)]));
    if (preview) this.#drawn.set(hash, preview);
  }
}

/** The bytes written in `base64`. */
function bytesOf(base64: string): Uint8Array<ArrayBuffer> {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}
