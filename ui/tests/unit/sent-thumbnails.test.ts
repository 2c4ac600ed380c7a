// SentThumbnails: a sent image's thumbnail drawn once from the bytes the backend keeps, or handed over by the
// composer; an image too large, let go of, or undrawable keeps its icon and is not asked for again.
import { describe, expect, it, vi } from 'vitest';
import { SentThumbnails } from '../../src/lib/sent-thumbnails.svelte';
import { settle } from './chat-store-fixtures';

/** What the fake backend answers for each hash: the image's base64, null (too large), or a refusal. */
const ANSWERS: Record<string, string | null | Error> = {
  photo: btoa('\x89PNG a photo'),
  huge: null,
  gone: new Error('no attached file is stored under gone; it was let go of, or never attached'),
  broken: btoa('not an image at all'),
};

function setup() {
  const getAttachedImage = vi.fn(async (hash: string) => {
    const answer = ANSWERS[hash];
    if (answer instanceof Error) throw answer;
    return answer ?? null;
  });
  // The reader draws what starts like a PNG; anything else cannot be drawn.
  const thumbnail = vi.fn(async (blob: Blob) => {
    const text = await blob.text();
    return text.startsWith('\uFFFDPNG') ? `data:image/png;base64,thumb(${text.slice(4)})` : null;
  });
  return { thumbnails: new SentThumbnails({ getAttachedImage }, { thumbnail }), getAttachedImage, thumbnail };
}

describe('SentThumbnails', () => {
  it.each([
    ['photo', 'data:image/png;base64,thumb( a photo)'],
    ['huge', undefined],
    ['gone', undefined],
    ['broken', undefined],
  ])('%s: its chip shows %s once drawn, and it is asked for once', async (hash, expected) => {
    const { thumbnails, getAttachedImage } = setup();
    expect(thumbnails.of(hash)).toBeUndefined();
    await settle();
    expect(thumbnails.of(hash)).toBe(expected);
    thumbnails.of(hash);
    await settle();
    expect(getAttachedImage.mock.calls).toEqual([[hash]]);
  });

  it('takes the composer\'s thumbnails as its message is sent: nothing is fetched for them', async () => {
    const { thumbnails, getAttachedImage, thumbnail } = setup();
    thumbnails.keep(new Map([['photo', 'data:image/png;base64,drawn-in-the-composer']]));
    expect(thumbnails.of('photo')).toBe('data:image/png;base64,drawn-in-the-composer');
    await settle();
    expect(getAttachedImage).not.toHaveBeenCalled();
    expect(thumbnail).not.toHaveBeenCalled();
  });
});
