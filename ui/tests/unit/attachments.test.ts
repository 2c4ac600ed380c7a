// Files attached to the draft: the composer's chips (read, attached, refused, removed), pasted files (named, read
// as bytes, an image's thumbnail), what a send carries and gives back when nothing was saved, the rules on what can
// be sent, and the warning on images a model cannot look at.
import { describe, expect, it, vi } from 'vitest';
import type { AttachProgress, Attachment } from '../../src/ipc/bindings';
import { DraftAttachments } from '../../src/lib/attachments.svelte';
import {
  NO_VISION_WARNING,
  attachmentChip,
  fileTokens,
  draftSendable,
  imageWarning,
  readCaption,
  readingDetail,
  refusalText,
  type PendingAttachment,
} from '../../src/lib/attachments';
import type { PastedFileReader } from '../../src/lib/pasted-files';
import { chat, ev, msg, settle, setup } from './chat-store-fixtures';
import { fakeApi, table } from './helpers';

const doc = (name: string, bytes = 1200): Attachment => ({ hash: `hash-of-${name}`, name, kind: 'document', bytes, chars: bytes - 200 });
const image = (name: string, bytes = 48_000): Attachment => ({ hash: `hash-of-${name}`, name, kind: 'image', bytes, chars: 0 });

/**
 * A backend whose attach_file (by path) and attach_bytes (by name) answer when the test says: `finish(path)` stores
 * the file, `refuse(path, message)` refuses it.
 */
function fileBackend(picked: string[] = []) {
  const waiting = new Map<string, { resolve: (a: Attachment) => void; reject: (e: unknown) => void }>();
  const progress = new Map<string, (p: AttachProgress) => void>();
  const answer = (key: string, indexed: (p: AttachProgress) => void) => {
    progress.set(key, indexed);
    return new Promise<Attachment>((resolve, reject) => waiting.set(key, { resolve, reject }));
  };
  const api = fakeApi('the draft attachments', {
    pickAttachments: vi.fn(async () => picked),
    attachFile: vi.fn(answer),
    attachBytes: vi.fn((name: string, _data: string, indexed: (p: AttachProgress) => void) => answer(name, indexed)),
  });
  return {
    api,
    /** The backend tells how much of the file is indexed. */
    indexed: (path: string, indexed: number) => progress.get(path)!({ indexed }),
    finish: (path: string, attachment = doc(path.split('/').at(-1)!)) => waiting.get(path)!.resolve(attachment),
    refuse: (path: string, message: string) => waiting.get(path)!.reject({ kind: 'invalidInput', message }),
  };
}

const chips = (draft: DraftAttachments) => draft.items.map((i) => [i.status, i.name, i.status === 'refused' ? i.error : undefined]);

describe('DraftAttachments', () => {
  it('reads each file picked, a chip for each meanwhile, in the order picked', async () => {
    const backend = fileBackend(['/docs/notes.md', '/docs/report.bin', '/docs/plan.pdf']);
    const draft = new DraftAttachments(backend.api);
    await draft.pick();
    expect(backend.api.attachFile).toHaveBeenCalledTimes(3);
    expect(chips(draft)).toEqual([['reading', 'notes.md', undefined], ['reading', 'report.bin', undefined], ['reading', 'plan.pdf', undefined]]);
    expect(draft.reading).toBe(true);

    backend.finish('/docs/plan.pdf');
    backend.refuse('/docs/report.bin', 'report.bin looks like a binary file, not text');
    backend.finish('/docs/notes.md');
    await settle();
    expect(chips(draft)).toEqual([
      ['attached', 'notes.md', undefined],
      ['refused', 'report.bin', 'report.bin looks like a binary file, not text'],
      ['attached', 'plan.pdf', undefined],
    ]);
    expect(draft.reading).toBe(false);
    expect(draft.attached.map((a) => a.name)).toEqual(['notes.md', 'plan.pdf']);
  });

  it('a long document being read says how much of it is indexed', async () => {
    const backend = fileBackend(['/docs/manual.txt']);
    const draft = new DraftAttachments(backend.api);
    await draft.pick();
    const detail = () => draft.items.map((i) => (i.status === 'reading' ? readingDetail(i.indexed) : i.status));
    expect(detail()).toEqual(['Reading…']);
    backend.indexed('/docs/manual.txt', 0.456);
    expect(detail()).toEqual(['Indexing 45%']);
    backend.finish('/docs/manual.txt');
    await settle();
    backend.indexed('/docs/manual.txt', 1); // late: the chip is attached
    expect(detail()).toEqual(['attached']);
  });

  it('a cancelled dialog attaches nothing; a dialog that fails says so', async () => {
    const backend = fileBackend([]);
    const draft = new DraftAttachments(backend.api);
    await draft.pick();
    expect(draft.items).toEqual([]);
    backend.api.pickAttachments = vi.fn(async () => Promise.reject({ kind: 'file', message: 'no portal' }));
    await draft.pick();
    expect(chips(draft)).toEqual([['refused', '', 'Could not open the file dialog: no portal']]);
  });

  it('a chip removed while its file is read stays removed; a refusal is dismissed', async () => {
    const backend = fileBackend();
    const draft = new DraftAttachments(backend.api);
    const adding = draft.add(['/a.md', '/b.bin']);
    await settle();
    draft.remove(draft.items[0].key);
    backend.finish('/a.md');
    backend.refuse('/b.bin', 'b.bin looks like a binary file, not text');
    await adding;
    expect(chips(draft)).toEqual([['refused', 'b.bin', 'b.bin looks like a binary file, not text']]);
    draft.remove(draft.items[0].key);
    expect(draft.items).toEqual([]);
  });

  it('the same content attached twice is one file', async () => {
    const backend = fileBackend();
    const draft = new DraftAttachments(backend.api);
    const adding = draft.add(['/a.md', '/copy-of-a.md']);
    await settle();
    backend.finish('/a.md', doc('a.md'));
    backend.finish('/copy-of-a.md', doc('a.md'));
    await adding;
    expect(chips(draft)).toEqual([['attached', 'a.md', undefined]]);
  });

  it('take hands over the attached files and clears the chips; restore puts them back first', async () => {
    const backend = fileBackend();
    const draft = new DraftAttachments(backend.api);
    const adding = draft.add(['/a.md', '/b.md']);
    await settle();
    backend.finish('/a.md');
    backend.finish('/b.md');
    await adding;
    const sent = draft.take();
    expect(sent.map((a) => a.name)).toEqual(['a.md', 'b.md']);
    expect(draft.items).toEqual([]);

    const later = draft.add(['/c.md']);
    await settle();
    backend.finish('/c.md');
    await later;
    draft.restore(sent);
    draft.restore(sent); // twice: still once each
    expect(draft.attached.map((a) => a.name)).toEqual(['a.md', 'b.md', 'c.md']);
  });
});

/** Reads a pasted file's bytes as the browser would; its thumbnail names the blob's size (null: none can be drawn). */
function fakeReader(thumbnails = true): PastedFileReader {
  return {
    base64: vi.fn(async (blob: Blob) => Buffer.from(await blob.arrayBuffer()).toString('base64')),
    thumbnail: vi.fn(async (blob: Blob) => (thumbnails ? `data:image/png;base64,thumb-of-${blob.size}-bytes` : null)),
  };
}

const pastedFile = (name: string, type: string, text = 'x'.repeat(10)) => new File([text], name, { type });
const previews = (draft: DraftAttachments) => draft.items.map((i) => (i.status === 'attached' ? (i.preview ?? null) : i.status));

describe('DraftAttachments.paste', () => {
  it('sends each pasted file as its bytes; an unnamed one is named by its type and numbered', async () => {
    const backend = fileBackend();
    const draft = new DraftAttachments(backend.api, () => {}, fakeReader());
    const files = [pastedFile('', 'image/png', 'png bytes'), pastedFile('notes.md', 'text/markdown', '# Notes'), pastedFile('', 'image/jpeg')];
    const pasting = draft.paste(files);
    await settle();
    expect(chips(draft)).toEqual([['reading', 'pasted-image-1.png', undefined], ['reading', 'notes.md', undefined], ['reading', 'pasted-image-2.jpg', undefined]]);
    expect(vi.mocked(backend.api.attachBytes).mock.calls.map(([name, data]) => [name, data])).toEqual([
      ['pasted-image-1.png', Buffer.from('png bytes').toString('base64')],
      ['notes.md', Buffer.from('# Notes').toString('base64')],
      ['pasted-image-2.jpg', Buffer.from('x'.repeat(10)).toString('base64')],
    ]);
    expect(backend.api.attachFile).not.toHaveBeenCalled();

    backend.finish('pasted-image-1.png', image('pasted-image-1.png'));
    backend.finish('notes.md');
    backend.refuse('pasted-image-2.jpg', 'pasted-image-2.jpg is not an image that can be read (damaged, or cut short)');
    await pasting;
    expect(chips(draft)).toEqual([
      ['attached', 'pasted-image-1.png', undefined],
      ['attached', 'notes.md', undefined],
      ['refused', 'pasted-image-2.jpg', 'pasted-image-2.jpg is not an image that can be read (damaged, or cut short)'],
    ]);
    // The next unnamed paste goes on counting.
    void draft.paste([pastedFile('', 'application/pdf')]);
    await settle();
    expect(draft.items.at(-1)?.name).toBe('pasted-file-3.pdf');
  });

  it('an image the backend takes gets its thumbnail; a document, a refused file and an undrawable image get none', async () => {
    const backend = fileBackend();
    const reader = fakeReader();
    const changed = vi.fn();
    const draft = new DraftAttachments(backend.api, changed, reader);
    const pasting = draft.paste([pastedFile('shot.png', 'image/png'), pastedFile('a.txt', 'text/plain'), pastedFile('cat.webp', 'image/webp')]);
    await settle();
    backend.finish('shot.png', image('shot.png'));
    backend.finish('a.txt');
    backend.refuse('cat.webp', 'cat.webp is a WebP image, which models cannot read yet: save it as PNG or JPEG and attach that');
    await pasting;
    expect(previews(draft)).toEqual(['data:image/png;base64,thumb-of-10-bytes', null, 'refused']);
    // Drawn only for what the backend took as an image (it checked its size first).
    expect(vi.mocked(reader.thumbnail).mock.calls.map(([blob]) => (blob as File).name)).toEqual(['shot.png']);
    expect(changed).toHaveBeenCalledTimes(2);

    const plain = new DraftAttachments(backend.api, () => {}, fakeReader(false));
    const again = plain.paste([pastedFile('other.png', 'image/png')]);
    await settle();
    backend.finish('other.png', image('other.png'));
    await again;
    expect(previews(plain)).toEqual([null]);
  });

  it('a file that cannot be read here is refused on its chip; a chip removed before its thumbnail stays removed', async () => {
    const backend = fileBackend();
    const reader = fakeReader();
    reader.base64 = vi.fn(() => Promise.reject(new Error('could not read the pasted file: NotReadableError')));
    const draft = new DraftAttachments(backend.api, () => {}, reader);
    await draft.paste([pastedFile('gone.png', 'image/png')]);
    expect(chips(draft)).toEqual([['refused', 'gone.png', 'could not read the pasted file: NotReadableError']]);
    expect(backend.api.attachBytes).not.toHaveBeenCalled();

    const slow = fakeReader();
    let draw: (url: string) => void = () => {};
    slow.thumbnail = vi.fn(() => new Promise<string | null>((resolve) => (draw = resolve)));
    const other = new DraftAttachments(backend.api, () => {}, slow);
    const pasting = other.paste([pastedFile('shot.png', 'image/png')]);
    await settle();
    backend.finish('shot.png', image('shot.png'));
    await settle();
    other.remove(other.items[0].key);
    draw('data:image/png;base64,late');
    await pasting;
    expect(other.items).toEqual([]);
  });

  it('a send that saved nothing gives the images back with their thumbnails', async () => {
    const backend = fileBackend();
    const draft = new DraftAttachments(backend.api, () => {}, fakeReader());
    const pasting = draft.paste([pastedFile('shot.png', 'image/png')]);
    await settle();
    backend.finish('shot.png', image('shot.png'));
    await pasting;
    const sent = draft.take();
    expect(sent).toEqual([image('shot.png')]);
    draft.restore(sent);
    expect(previews(draft)).toEqual(['data:image/png;base64,thumb-of-10-bytes']);
  });
});

const item = (status: PendingAttachment['status']): PendingAttachment =>
  status === 'attached'
    ? { key: 1, status, name: 'a.md', attachment: doc('a.md') }
    : status === 'refused'
      ? { key: 1, status, name: 'a.bin', error: 'no' }
      : { key: 1, status, name: 'a.md' };

table('draftSendable: text or a file, and nothing still being read', ([text, statuses]: [string, PendingAttachment['status'][]]) => draftSendable(text, statuses.map(item)), [
  [['', []], false],
  [['  \n', []], false],
  [['hi', []], true],
  [['', ['attached']], true],
  [['', ['refused']], false],
  [['hi', ['refused']], true],
  [['hi', ['attached', 'reading']], false],
]);

table('refusalText: names the file once', ([name, error]: [string, string]) => refusalText(name, error), [
  [['report.bin', 'report.bin looks like a binary file, not text'], 'report.bin looks like a binary file, not text'],
  [['big.txt', 'the file is larger than 10 MB'], 'big.txt: the file is larger than 10 MB'],
  [['', 'Could not open the file dialog'], 'Could not open the file dialog'],
]);

type CaptionOf = Parameters<typeof readCaption>;
const DOC = { kind: 'document' as const };
const IMAGE = { kind: 'image' as const };
table('readCaption: how the model read a sent message with files, in tokens', ([tokens, files, byPassages]: CaptionOf) => readCaption(tokens, files, byPassages).text, [
  [[2345, [DOC], false], 'Read whole · 2,345 tokens'],
  [[812, [DOC, IMAGE], true], 'Read by passages · 812 tokens'],
  [[22, [IMAGE], false], 'Read with its images · 22 tokens'],
  [[1, [DOC], false], 'Read whole · 1 token'],
]);

table('readingDetail: reading, then the share of a long document indexed', readingDetail, [
  [undefined, 'Reading…'],
  [0, 'Indexing 0%'],
  [0.999, 'Indexing 99%'],
  [1, 'Indexing 100%'],
  [1.5, 'Indexing 100%'],
]);

describe('readCaption', () => {
  it('says in its tooltip that documents read whole are not read again', () => {
    expect(readCaption(2345, [DOC], false).title).toBe(
      'The model read this message as 2,345 tokens: its words and its documents, whole — kept in the chat’s cache, so the next question reads none of them again',
    );
  });
});

type ChipOf = Parameters<typeof attachmentChip>;
table('attachmentChip: the name, its size, its kind, and what the model gets of it', ([file, byPassages, tokens]: ChipOf) => attachmentChip(file, byPassages, tokens), [
  [
    [{ name: 'q3.md', kind: 'document', bytes: 12_400, chars: 11_873 }],
    { label: 'q3.md', detail: '12.4 KB', title: 'q3.md · 12.4 KB · the model reads 11,873 characters of it', kind: 'document' },
  ],
  [[{ name: 'a', kind: 'document', bytes: 0, chars: 1 }], { label: 'a', detail: '0 B', title: 'a · 0 B · the model reads 1 character of it', kind: 'document' }],
  [
    [{ name: 'handbook.md', kind: 'document', bytes: 480_000, chars: 471_000 }, true],
    {
      label: 'handbook.md',
      detail: '480.0 KB',
      title: 'handbook.md · 480.0 KB · too long to read whole: the model was given the passages that best match the question',
      kind: 'document',
    },
  ],
  // A document read whole, counted: its tokens beside its size.
  [
    [{ name: 'q3.md', kind: 'document', bytes: 12_400, chars: 11_873 }, false, 2_931],
    {
      label: 'q3.md',
      detail: '12.4 KB · 2,931 tokens',
      title: 'q3.md · 12.4 KB · the model read its 11,873 characters as 2,931 tokens',
      kind: 'document',
    },
  ],
  // Read by passages, or an image: no count of its own.
  [
    [{ name: 'handbook.md', kind: 'document', bytes: 480_000, chars: 471_000 }, true, 900],
    {
      label: 'handbook.md',
      detail: '480.0 KB',
      title: 'handbook.md · 480.0 KB · too long to read whole: the model was given the passages that best match the question',
      kind: 'document',
    },
  ],
  // An image is shown, not read: no characters, and never passages, whatever its message's documents were given.
  [
    [{ name: 'shot.png', kind: 'image', bytes: 48_000, chars: 0 }, true],
    { label: 'shot.png', detail: '48.0 KB', title: 'shot.png · 48.0 KB · an image, shown to the model', kind: 'image' },
  ],
]);

type FileTokensOf = Parameters<typeof fileTokens>;
table('fileTokens: each document its own count, in order; images none', ([files, documents]: FileTokensOf) => fileTokens(files, documents), [
  [[[{ kind: 'document' }, { kind: 'image' }, { kind: 'document' }], [120, 45]], [120, undefined, 45]],
  [[[{ kind: 'document' }], null], [undefined]],
  [[[{ kind: 'image' }], []], [undefined]],
]);

const LLAMA = '/models/llama.gguf';
const loadedModel = (projector?: string) => ({ path: LLAMA, ...(projector ? { projector } : {}) });
type WarningOf = Parameters<typeof imageWarning>;
table('imageWarning: only for a local chat whose loaded model has no projector', ([target, loaded]: WarningOf) => imageWarning(target, loaded), [
  [[{ kind: 'local', model: null }, loadedModel()], NO_VISION_WARNING],
  [[{ kind: 'local', model: LLAMA }, loadedModel()], NO_VISION_WARNING],
  [[{ kind: 'local', model: LLAMA }, loadedModel('/models/mmproj-llama-f16.gguf')], null],
  // Another chat's model is loaded: this chat's own is loaded before its reply, and may read images.
  [[{ kind: 'local', model: '/models/other.gguf' }, loadedModel()], null],
  [[{ kind: 'local', model: null }, null], null],
  [[{ kind: 'remote', provider: 'openai', model: 'gpt-4o' }, loadedModel()], null],
]);

describe('ChatStore with files', () => {
  async function withFiles(paths: string[], messages: ReturnType<typeof msg>[] = []) {
    const t = await setup({ chats: [chat(1, 'Docs', 1)], messages: { 1: messages } });
    const files = fileBackend();
    Object.assign(t.backend.api, { attachFile: files.api.attachFile });
    const adding = t.store.attachments.add(paths);
    await settle();
    return { ...t, files, adding };
  }

  it('a file attached is read ahead at once, with the text typed so far; removing it reads the draft again', async () => {
    const { store, backend, files, adding, timers } = await withFiles(['/a.md']);
    const prefills = () => vi.mocked(backend.api.prefillDraft).mock.calls;
    files.finish('/a.md');
    await adding;
    timers.advanceTo(1000);
    expect(prefills()).toEqual([[1, '', [doc('a.md')], false]]);
    store.draftTyped('Sum it up');
    timers.advanceTo(2000);
    expect(prefills().at(-1)).toEqual([1, 'Sum it up', [doc('a.md')], false]);
    store.attachments.remove(store.attachments.items[0].key);
    timers.advanceTo(3000);
    expect(prefills().at(-1)).toEqual([1, 'Sum it up', [], false]);
    expect(prefills()).toHaveLength(3);
  });

  it('sends the files with the text, or alone, and clears the chips; not while one is still read', async () => {
    const { store, backend, files, adding } = await withFiles(['/a.md', '/b.md']);
    files.finish('/a.md');
    await settle();
    expect(store.canSend).toBe(false); // b.md is still being read
    expect(await store.send()).toBe(false);
    files.finish('/b.md');
    await adding;
    expect(store.canSend).toBe(true); // no text: the files alone

    void store.send();
    await settle();
    expect(backend.api.sendMessage).toHaveBeenCalledWith(1, '', [doc('a.md'), doc('b.md')], expect.any(Function));
    expect(store.attachments.items).toEqual([]);
  });

  it('a send that saved nothing gives the text and the files back', async () => {
    const { store, backend, files, adding } = await withFiles(['/a.md']);
    files.finish('/a.md');
    await adding;
    store.draft = 'Sum it up';
    const sending = store.send();
    await settle();
    backend.send.reject({ kind: 'invalidInput', message: 'a.md is no longer stored; attach it again' });
    expect(await sending).toBe(false);
    expect(store.draft).toBe('Sum it up');
    expect(store.attachments.attached).toEqual([doc('a.md')]);
  });

  it('shows the files on the sent message while the model loads; an edit of a message with files may drop its text', async () => {
    const withDoc = msg({ id: 5, chatId: 1, role: 'user', content: 'Read this', attachments: [doc('a.md')] });
    const { store, backend, files, adding } = await withFiles(['/b.md'], [withDoc]);
    files.finish('/b.md');
    await adding;
    const sending = store.send();
    await settle();
    backend.send.emit(ev.modelLoading(0.5));
    expect(store.messages.at(-1)?.attachments).toEqual([doc('b.md')]);
    backend.send.emit(ev.userSaved(msg({ id: 6, chatId: 1, role: 'user', attachments: [doc('b.md')] })));
    backend.send.emit(ev.finished(msg({ id: 7, chatId: 1, role: 'assistant', content: 'Done.' })));
    backend.send.resolve();
    await sending;

    store.startEdit(5);
    store.editing!.text = '  ';
    void store.saveEdit();
    await settle();
    expect(backend.api.editMessage).toHaveBeenCalledWith(1, 5, '', expect.any(Function));
  });
});
