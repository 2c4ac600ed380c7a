// @vitest-environment jsdom
import { describe, expect, it, vi } from 'vitest';
import { watchFileDrops } from '../../src/lib/file-drop';

describe('watchFileDrops', () => {
  it('outside Tauri, offers the test hook only, and takes it back when stopped', async () => {
    const onDrop = vi.fn(async () => {});
    const stop = watchFileDrops({ onHover: () => {}, onDrop });
    expect(typeof window.__hearthDropPaths).toBe('function');
    await window.__hearthDropPaths?.(['/m/a.gguf']);
    expect(onDrop).toHaveBeenCalledWith(['/m/a.gguf']);
    stop();
    expect(window.__hearthDropPaths).toBeUndefined();
  });

  it('a later watcher owns the hook; stopping an earlier one leaves it', () => {
    const first = watchFileDrops({ onHover: () => {}, onDrop: async () => {} });
    const second = watchFileDrops({ onHover: () => {}, onDrop: async () => {} });
    const hook = window.__hearthDropPaths;
    first();
    expect(window.__hearthDropPaths).toBe(hook);
    second();
    expect(window.__hearthDropPaths).toBeUndefined();
  });
});
