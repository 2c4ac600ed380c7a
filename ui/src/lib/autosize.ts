/**
 * Svelte action: a textarea grows with its text up to its CSS max-height. Pass the bound value so
 * the height also follows programmatic changes (a draft cleared after sending).
 */
export function autosize(node: HTMLTextAreaElement, _value?: string) {
  const resize = () => {
    node.style.height = 'auto';
    const borders = node.offsetHeight - node.clientHeight;
    node.style.height = `${node.scrollHeight + borders}px`;
  };
  resize();
  node.addEventListener('input', resize);
  return {
    update: resize,
    destroy: () => node.removeEventListener('input', resize),
  };
}
