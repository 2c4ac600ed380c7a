// Files attached to a message, as the composer holds them before it is sent (the store is
// attachments.svelte.ts) and as a sent message shows them.
import type { Attachment, AttachmentKind, ModelInfo, ModelTarget } from '../ipc/bindings';
import { formatBytes } from './format';

/**
 * A file in the composer: being read by the backend (a long document's share indexed for search so far in
 * `indexed`, 0 to 1), attached, or refused (and why, in words). An attached image pasted has its thumbnail
 * (`preview`, a `data:` URL) once drawn.
 */
export type PendingAttachment =
  | { key: number; status: 'reading'; name: string; indexed?: number }
  | { key: number; status: 'attached'; name: string; attachment: Attachment; preview?: string }
  | { key: number; status: 'refused'; name: string; error: string };

/** The files read and stored, in order: what the next message carries. */
export function attachedFiles(items: readonly PendingAttachment[]): Attachment[] {
  return items.flatMap((item) => (item.status === 'attached' ? [item.attachment] : []));
}

/** A file is still being read: a message sent now would leave it behind. */
export function stillReading(items: readonly PendingAttachment[]): boolean {
  return items.some((item) => item.status === 'reading');
}

/** A draft can be sent once it has text or a file, and no file is still being read. */
export function draftSendable(text: string, items: readonly PendingAttachment[]): boolean {
  return (text.trim().length > 0 || attachedFiles(items).length > 0) && !stillReading(items);
}

/** What a file's chip says while the backend reads it: "Reading…", then how much of a long document is indexed for search. */
export function readingDetail(indexed: number | undefined): string {
  return indexed === undefined ? 'Reading…' : `Indexing ${Math.floor(Math.min(Math.max(indexed, 0), 1) * 100)}%`;
}

/** Why a file was refused, naming it (the backend's words usually do already). */
export function refusalText(name: string, error: string): string {
  return name === '' || error.includes(name) ? error : `${name}: ${error}`;
}

/**
 * An attached file's chip: its name, its size beside it ("12.4 KB"), its kind (the icon), and a tooltip saying
 * what the model gets of it: an image is shown to it; a document is read, all of it, or (`byPassages`: a sent
 * question's document too long for the context) by passages. A document read whole says how many tokens the
 * model read it as (`tokens`, once a local model counted them) beside its size too.
 */
export function attachmentChip(
  attachment: Pick<Attachment, 'name' | 'kind' | 'bytes' | 'chars'>,
  byPassages = false,
  tokens?: number,
): { label: string; detail: string; title: string; kind: AttachmentKind } {
  const size = formatBytes(attachment.bytes) || '0 B';
  const chars = `${attachment.chars.toLocaleString('en')} ${attachment.chars === 1 ? 'character' : 'characters'}`;
  const counted = attachment.kind === 'document' && !byPassages && tokens !== undefined ? tokenCount(tokens) : null;
  const read =
    attachment.kind === 'image'
      ? 'an image, shown to the model'
      : byPassages
        ? 'too long to read whole: the model was given the passages that best match the question'
        : counted
          ? `the model read its ${chars} as ${counted}`
          : `the model reads ${chars} of it`;
  const detail = counted ? `${size} · ${counted}` : size;
  return { label: attachment.name, detail, title: `${attachment.name} · ${size} · ${read}`, kind: attachment.kind };
}

/** Each file's tokens as the model read it, by position: the documents' counts (`documents`, in the order the message carries them) matched to its documents; none for images, or when not counted. */
export function fileTokens(files: readonly Pick<Attachment, 'kind'>[], documents: readonly number[] | null): (number | undefined)[] {
  let next = 0;
  return files.map((file) => (file.kind === 'document' && documents ? documents[next++] : undefined));
}

function tokenCount(tokens: number): string {
  return `${tokens.toLocaleString('en')} ${tokens === 1 ? 'token' : 'tokens'}`;
}

/**
 * What a sent message with files says of how the model read it, `tokens` in all: its documents whole (they stay in
 * the chat's cache: the next question reads none of them again), or the passages retrieved for it, or its images.
 */
export function readCaption(
  tokens: number,
  files: readonly Pick<Attachment, 'kind'>[],
  byPassages: boolean,
): { text: string; title: string } {
  const count = tokenCount(tokens);
  const documents = files.some((file) => file.kind === 'document');
  const how = !documents ? 'Read with its images' : byPassages ? 'Read by passages' : 'Read whole';
  const what = !documents
    ? 'its words and its images'
    : byPassages
      ? 'its words and the passages retrieved for it'
      : 'its words and its documents, whole — kept in the chat’s cache, so the next question reads none of them again';
  return { text: `${how} · ${count}`, title: `The model read this message as ${count}: ${what}` };
}

/** What an attached image's chip says when the chat's model cannot look at it (the backend would refuse the send). */
export const NO_VISION_WARNING = 'This model cannot read images — load a vision model (its mmproj-….gguf beside it, or chosen in Settings → Model)';

/**
 * The warning for images attached in a chat whose replies come from `target`, with `loaded` the local model
 * loaded now: a local model without a projector reads text only. Null when it reads images, when the chat is
 * remote (its provider says for itself), and when the loaded model is not the chat's (the chat's own is
 * loaded before its reply, and what it reads is not known here until then).
 */
export function imageWarning(target: ModelTarget, loaded: Pick<ModelInfo, 'path' | 'projector'> | null): string | null {
  if (target.kind !== 'local' || loaded === null) return null;
  if (target.model !== null && target.model !== loaded.path) return null;
  return loaded.projector ? null : NO_VISION_WARNING;
}

/** What the typing read-ahead compares drafts by: the text, and the files' hashes when there are any (blank: nothing to read ahead). */
export function draftKey(text: string, files: readonly Pick<Attachment, 'hash'>[]): string {
  return files.length === 0 ? text : `${files.map((file) => file.hash).join(',')}\n${text}`;
}
