import { Marked } from 'marked';
import DOMPurify from 'dompurify';

// Model output is untrusted: parse Markdown, then sanitize the resulting HTML.
// No raw HTML may execute: scripts, event handlers and javascript: URLs are removed,
// and tags that could restyle or take over the app are forbidden outright.
const marked = new Marked({ gfm: true, breaks: true, async: false });

const FORBID_TAGS = [
  'style', 'script', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'base',
  'link', 'meta', 'form', 'input', 'button', 'textarea', 'select', 'option', 'dialog',
  'template', 'svg', 'math', 'video', 'audio', 'source', 'track',
];
const FORBID_ATTR = ['style', 'id', 'name', 'srcset', 'action', 'formaction', 'autofocus', 'tabindex'];

// Only these URL schemes survive in href/src (DOMPurify strips javascript:, vbscript:, etc. too).
const SAFE_URL = /^(?:https?:|mailto:|#)/i;
const SAFE_IMG = /^data:image\/(?:png|gif|jpe?g|webp);/i;

let hooked = false;
function installHooks(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A') {
      const href = node.getAttribute('href');
      if (href !== null && !SAFE_URL.test(href.trim())) node.removeAttribute('href');
      if (node.hasAttribute('href') && !href!.trim().startsWith('#')) {
        // Never navigate the app window itself.
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer nofollow');
      }
    } else if (node.tagName === 'IMG') {
      // Remote images are blocked by the CSP anyway; keep only inline raster data.
      const src = node.getAttribute('src');
      if (src === null || !SAFE_IMG.test(src.trim())) node.removeAttribute('src');
    }
  });
}

/** Render untrusted Markdown (model output) to sanitized HTML. */
export function renderMarkdown(source: string): string {
  installHooks();
  const html = marked.parse(source) as string;
  return DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS,
    FORBID_ATTR,
    ALLOW_DATA_ATTR: false,
    ALLOW_UNKNOWN_PROTOCOLS: false,
  });
}
