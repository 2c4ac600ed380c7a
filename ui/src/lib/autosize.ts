/**
 * Svelte action: a textarea grows with its text up to its CSS max-height. Pass the bound value so
 * the height also follows programmatic changes (a draft cleared after sending).
 *
 * Text only inserted (typing, a paste at the caret) can only make it taller, so it grows when its
 * text overflows and is not measured afresh: collapsing it to measure lays out the window around
 * it — the message list beside a long reply — twice a key (in WebKitGTK without a GPU, ~5 ms of a
 * key's ~17; docs/benchmarks.md). Any other change (a deletion, a new text) measures afresh.
 */
export function autosize(node: HTMLTextAreaElement, _value?: string) {
  /** The text the height was last fitted to. */
  let fitted: string | null = null;
  const setHeight = () => {
    const borders = node.offsetHeight - node.clientHeight;
    const height = `${node.scrollHeight + borders}px`;
    if (node.style.height !== height) node.style.height = height;
  };
  const fit = () => {
    const text = node.value;
    if (text === fitted) return; // the input event and the bound value's update of one key
    const inserted = fitted !== null && isInsertion(fitted, text);
    fitted = text;
    if (inserted) {
      if (node.scrollHeight > node.clientHeight) setHeight();
      return;
    }
    node.style.height = 'auto';
    setHeight();
  };
  fit();
  node.addEventListener('input', fit);
  return {
    update: (_value?: string) => fit(),
    destroy: () => node.removeEventListener('input', fit),
  };
}

/** Whether `after` is `before` with text inserted at one place (nothing removed). */
export function isInsertion(before: string, after: string): boolean {
  if (after.length <= before.length) return false;
  let head = 0;
  while (head < before.length && before[head] === after[head]) head++;
  return after.endsWith(before.slice(head));
}
