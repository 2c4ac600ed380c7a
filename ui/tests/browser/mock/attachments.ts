// Documents attached to user messages: attach_file reads a file and stores it once per content (here: its
// name, as no file is read), pick_attachments is the open dialog (`attachPick`; [] when cancelled), and a
// turn's files must have been stored first (checkAttachments), as hearth-core's check_attachments says.
import type { Attachment } from '../../../src/ipc/bindings';
import type { Handlers } from './ipc';
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

/** The file's text as the model reads it, after `attachDelayMs`; binary files (`.bin`) are refused at once, as the backend words it. */
async function attachFile(path: string): Promise<Attachment> {
  const name = path.split(/[\\/]/).at(-1) ?? path;
  if (/\.bin$/i.test(name)) throw ipcError('file', `${name} looks like a binary file, not text`);
  await delay(state.attachDelayMs);
  const attachment: Attachment = { hash: fakeHash(name), name, kind: 'document', bytes: path.length * 100, chars: path.length * 80 };
  state.attachments[attachment.hash] = attachment;
  return clone(attachment);
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
  pickAttachments: () => clone(state.attachPick),
} satisfies Partial<Handlers>;
