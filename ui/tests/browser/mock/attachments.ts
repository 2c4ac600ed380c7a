// Files attached to user messages: attach_file reads a file and stores it once per content (here: its name, as
// no file is read), attach_bytes reads a pasted file's bytes (stored once per content; an image's kept for
// get_attached_image), pick_attachments is the
// open dialog (`attachPick`; [] when cancelled), and a turn's files must have been stored first
// (checkAttachments), as hearth-core's check_attachments says.
import type { AttachProgress, Attachment, AttachmentLimits } from '../../../src/ipc/bindings';
import { ATTACHMENT_LIMIT_DEFAULTS } from './contract';
import { checkU32Fields, type Handlers, type Sink } from './ipc';
import { state } from './state';
import { clone, delay, ipcError } from './util';

/** The most files one message carries (hearth-core's MAX_ATTACHMENTS). */
const MAX_ATTACHMENTS = 16;

/** A SHA-256 in lowercase hex as the store keeps them, made up from `text` (the same for the same text). */
export function fakeHash(text: string): string {
  let hex = '';
  for (let round = 0; hex.length < 64; round++) {
    let h = 0x811c9dc5 ^ round; // FNV-1a, seeded by the round
    for (const c of text) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
    hex += h.toString(16).padStart(8, '0');
  }
  return hex.slice(0, 64);
}

/** A file the backend reads as binary (here: a `.bin`), refused at once as it words it. */
function refuseBinary(name: string) {
  if (/\.bin$/i.test(name)) throw ipcError('file', `${name} looks like a binary file, not text`);
}

/**
 * Stores a file read, after `attachDelayMs` (the time the backend takes to read it); a document is indexed
 * meanwhile, said over `indexed` in `attachIndexSteps` steps (none: indexed in one go, as a short one is).
 */
async function stored(attachment: Attachment, indexed: Sink<AttachProgress>): Promise<Attachment> {
  const steps = attachment.kind === 'document' ? state.attachIndexSteps : 0;
  for (let step = 1; step <= steps; step++) {
    await delay(state.attachDelayMs / (steps + 1));
    indexed.send({ indexed: step / (steps + 1) });
  }
  await delay(state.attachDelayMs / (steps + 1));
  state.attachments[attachment.hash] = attachment;
  return clone(attachment);
}

/** The file's text as the model reads it; binary files (`.bin`) are refused at once. */
async function attachFile(path: string, indexed: Sink<AttachProgress>): Promise<Attachment> {
  const name = path.split(/[\\/]/).at(-1) ?? path;
  refuseBinary(name);
  return stored({ hash: fakeHash(name), name, kind: 'document', bytes: path.length * 100, chars: path.length * 80 }, indexed);
}

const startsWith = (bytes: Uint8Array, magic: string, at = 0) => [...magic].every((c, i) => bytes[at + i] === c.charCodeAt(0));

/**
 * What hearth-attach reads a file as: WebP (by its RIFF/WEBP header, or here its name), an image the engine reads
 * (PNG, JPEG, GIF, BMP: by their first bytes, or here their names), else a document.
 */
function formatOf(name: string, bytes: Uint8Array): 'webp' | 'image' | 'document' {
  if ((startsWith(bytes, 'RIFF') && startsWith(bytes, 'WEBP', 8)) || /\.webp$/i.test(name)) return 'webp';
  const magic = ['\x89PNG', '\xFF\xD8\xFF', 'GIF87a', 'GIF89a'].some((m) => startsWith(bytes, m));
  return magic || /\.(png|jpe?g|gif|bmp)$/i.test(name) ? 'image' : 'document';
}

/**
 * A pasted file, its bytes in base64: an image is kept as it is (`chars` 0); WebP is refused in the backend's words
 * (AttachError::WebP; refusals.json has the case the browser test pastes, checked against the real command); a
 * document's text is its bytes as UTF-8. Stored once per content.
 */
async function attachBytes(name: string, data: string, indexed: Sink<AttachProgress>): Promise<Attachment> {
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  const format = formatOf(name, bytes);
  if (format === 'webp') throw ipcError('file', `${name} is a WebP image, which models cannot read yet: save it as PNG or JPEG and attach that`);
  if (format === 'image') {
    state.attachedImages[fakeHash(data)] = data;
    return stored({ hash: fakeHash(data), name, kind: 'image', bytes: bytes.length, chars: 0 }, indexed);
  }
  refuseBinary(name);
  const chars = [...new TextDecoder().decode(bytes)].length;
  return stored({ hash: fakeHash(data), name, kind: 'document', bytes: bytes.length, chars }, indexed);
}

/** A new question's files: at most MAX_ATTACHMENTS, each stored before. */
export function checkAttachments(attachments: Attachment[]) {
  if (attachments.length > MAX_ATTACHMENTS) {
    throw ipcError('invalidInput', `a message carries at most ${MAX_ATTACHMENTS} files, not ${attachments.length}`);
  }
  const missing = attachments.find((a) => !state.attachments[a.hash]);
  if (missing) throw ipcError('invalidInput', `${missing.name} is not a stored attachment`);
}

export const attachmentCommands = {
  attachFile,
  attachBytes,
  pickAttachments: () => clone(state.attachPick),
  getAttachmentLimits: () => clone(state.attachmentLimits),
  /** Saved after AttachmentLimits' serde check; what AttachmentLimits::validate refuses is in refusals.json. */
  setAttachmentLimits: (limits: AttachmentLimits) => {
    state.attachmentLimits = checkU32Fields('set_attachment_limits', 'limits', limits, ATTACHMENT_LIMIT_DEFAULTS);
    return clone(state.attachmentLimits);
  },
  /**
   * A stored image's bytes for a sent message's thumbnail; a document's hash refused as the backend words it (a
   * hash that is none, or that nothing is stored under: refusals.json).
   */
  getAttachedImage: (hash: string) => {
    if (state.attachments[hash]?.kind === 'document') throw ipcError('invalidInput', `the file stored under ${hash} is a document, not an image`);
    const image = state.attachedImages[hash];
    if (image === undefined) throw ipcError('notFound', `no attached file is stored under ${hash}; it was let go of, or never attached`);
    return image;
  },
  getEmbeddingModel: () => state.embeddingModel,
  /** Chosen as the backend chooses once its engine has embedded a word; the files it refuses are in refusals.json. */
  setEmbeddingModel: async (path: string | null) => {
    await delay(state.embedCheckMs);
    state.embeddingModel = path;
    return state.embeddingModel;
  },
} satisfies Partial<Handlers>;
