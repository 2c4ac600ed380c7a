// Files pasted into the composer (a screenshot, files copied in a file manager): which they are, what an
// unnamed one is called, its bytes as the backend's attach_bytes takes them (base64), and an image's
// thumbnail for its chip. DraftAttachments (attachments.svelte.ts) attaches them.

/** The files of a paste (clipboard items of kind 'file'); none for a paste of text. */
export function pastedFiles(data: Partial<Pick<DataTransfer, 'items' | 'files'>> | null): File[] {
  if (!data) return [];
  // `items` is what the spec lists a paste's files in; `files` only where a webview has no `items`.
  if (!data.items) return Array.from(data.files ?? []);
  return Array.from(data.items).flatMap((item) => {
    const file = item.kind === 'file' ? item.getAsFile() : null;
    return file ? [file] : [];
  });
}

/** Extensions by MIME type, for the files a paste leaves unnamed (a screenshot is usually `image/png`). */
const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/bmp': 'bmp',
  'image/webp': 'webp',
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/html': 'html',
  'application/pdf': 'pdf',
};

/** What the `n`th unnamed file of the session is called: `pasted-image-1.png`, `pasted-file-2.pdf`, `pasted-file-3`. */
export function pastedName(type: string, n: number): string {
  const mime = type.split(';')[0].trim().toLowerCase();
  const stem = mime.startsWith('image/') ? 'pasted-image' : 'pasted-file';
  const extension = EXTENSIONS[mime];
  return extension ? `${stem}-${n}.${extension}` : `${stem}-${n}`;
}

/**
 * The blob's bytes in base64. FileReader encodes natively: no string of the whole file built a character at
 * a time, and no `String.fromCharCode(...bytes)`, whose arguments overflow the stack on a big file.
 */
export function base64Of(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    // A data URL: `data:<type>;base64,` and then the bytes.
    reader.onload = () => {
      const url = String(reader.result);
      resolve(url.slice(url.indexOf(',') + 1));
    };
    reader.onerror = () => reject(new Error(`could not read the pasted file: ${reader.error?.message ?? 'unknown error'}`));
    reader.readAsDataURL(blob);
  });
}

/** The thumbnail's side in pixels: twice the chip's 24 px, for high-density screens. */
const THUMBNAIL_SIDE = 48;

/**
 * A small square thumbnail of an image (its middle, scaled down) as a `data:` URL; null when it cannot be drawn.
 * Not an object URL of the blob: the app's CSP (tauri.conf.json) allows images from `data:` but not `blob:`, and
 * a thumbnail of a few KB keeps no decoded copy of a large image alive while the chip shows.
 */
export async function thumbnailOf(blob: Blob): Promise<string | null> {
  if (typeof createImageBitmap !== 'function' || typeof document === 'undefined') return null;
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(blob);
  } catch {
    return null; // a format this webview does not decode: its chip keeps the image icon
  }
  try {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = THUMBNAIL_SIDE;
    const context = canvas.getContext('2d');
    if (!context) return null;
    const crop = Math.min(bitmap.width, bitmap.height);
    context.drawImage(bitmap, (bitmap.width - crop) / 2, (bitmap.height - crop) / 2, crop, crop, 0, 0, THUMBNAIL_SIDE, THUMBNAIL_SIDE);
    return canvas.toDataURL('image/png');
  } catch {
    return null;
  } finally {
    bitmap.close();
  }
}

/** How DraftAttachments reads a pasted file (the browser's way by default; unit tests pass their own). */
export type PastedFileReader = {
  base64(blob: Blob): Promise<string>;
  /** Resolves null when no thumbnail can be drawn; never rejects. */
  thumbnail(blob: Blob): Promise<string | null>;
};

export const browserReader: PastedFileReader = { base64: base64Of, thumbnail: thumbnailOf };
