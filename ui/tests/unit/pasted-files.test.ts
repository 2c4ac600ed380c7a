// @vitest-environment jsdom
// Pasted files: which of a paste's clipboard items are files, what an unnamed one is called, and its bytes in base64
// (FileReader's, which jsdom has; the thumbnail needs a canvas, and is checked in the browser tests).
import { describe, expect, it } from 'vitest';
import { base64Of, pastedFiles, pastedName } from '../../src/lib/pasted-files';
import { table } from './helpers';

/** A clipboard item as DataTransfer lists it. */
const item = (kind: 'file' | 'string', file: File | null = null) => ({ kind, getAsFile: () => file }) as DataTransferItem;
const clipboard = (items: DataTransferItem[]) => ({ items: items as unknown as DataTransferItemList });

describe('pastedFiles', () => {
  const shot = new File(['png'], 'image.png', { type: 'image/png' });
  const notes = new File(['# Notes'], 'notes.md', { type: 'text/markdown' });

  it('takes the items of kind file, in order, and nothing of a paste of text', () => {
    expect(pastedFiles(clipboard([item('string'), item('file', shot), item('file', notes)]))).toEqual([shot, notes]);
    expect(pastedFiles(clipboard([item('string'), item('string')]))).toEqual([]);
    expect(pastedFiles(null)).toEqual([]);
  });

  it('skips a file item the webview cannot hand over', () => {
    expect(pastedFiles(clipboard([item('file', null), item('file', shot)]))).toEqual([shot]);
  });

  it('reads `files` where there is no items list', () => {
    expect(pastedFiles({ files: [shot] as unknown as FileList })).toEqual([shot]);
  });
});

table('pastedName: by the MIME type, numbered', ([type, n]: [string, number]) => pastedName(type, n), [
  [['image/png', 1], 'pasted-image-1.png'],
  [['image/jpeg', 2], 'pasted-image-2.jpg'],
  [['IMAGE/GIF', 3], 'pasted-image-3.gif'],
  [['image/bmp', 4], 'pasted-image-4.bmp'],
  [['image/webp', 5], 'pasted-image-5.webp'],
  [['image/x-unheard-of', 6], 'pasted-image-6'],
  [['text/plain;charset=utf-8', 7], 'pasted-file-7.txt'],
  [['application/pdf', 8], 'pasted-file-8.pdf'],
  [['', 9], 'pasted-file-9'],
]);

describe('base64Of', () => {
  it('encodes every byte value, the padding included', async () => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(await base64Of(new Blob([bytes]))).toBe(Buffer.from(bytes).toString('base64'));
    expect(await base64Of(new Blob([new Uint8Array([0xff, 0xd8])], { type: 'image/jpeg' }))).toBe('/9g=');
    expect(await base64Of(new Blob([]))).toBe('');
  });

  it('reads a file of several megabytes whole (no argument list as long as the file)', async () => {
    const bytes = new Uint8Array(6 * 1024 * 1024).map((_, i) => (i * 31) % 251);
    const encoded = await base64Of(new Blob([bytes], { type: 'image/png' }));
    expect(encoded.length).toBe(Math.ceil(bytes.length / 3) * 4);
    expect(Buffer.from(encoded, 'base64').equals(Buffer.from(bytes))).toBe(true);
  });
});
