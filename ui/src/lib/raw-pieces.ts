/**
 * An overlong block being written (GrowingLexer's `RAW_BLOCK`), cut into pieces that do not change
 * as the block grows: the window replaces only the last piece's DOM at an update, so WebKit lays
 * out and shapes only that piece's text. As one <pre>, every update laid out and shaped the whole
 * block again (perf of the web process while 5,000 lines of code streamed: harfbuzz, ICU's line
 * breaker and WebKit's layout, 50–60 ms an update).
 *
 * A piece ends after the first line break at least `RAW_PIECE` characters into it, or at twice
 * that length when no line ends there (a 100,000-character line): both are fixed by text already
 * written, so a piece once followed by another never changes.
 */
export const RAW_PIECE = 2_000;

export function rawPieces(text: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  for (;;) {
    const end = pieceEnd(text, start);
    if (end === null) break;
    pieces.push(text.slice(start, end));
    start = end;
  }
  if (start < text.length || pieces.length === 0) pieces.push(text.slice(start));
  return pieces;
}

/** Where the piece starting at `start` ends, or null while the text written cannot tell yet. */
function pieceEnd(text: string, start: number): number | null {
  const longest = start + 2 * RAW_PIECE;
  const newline = text.slice(start + RAW_PIECE - 1, longest).indexOf('\n');
  if (newline >= 0) return start + RAW_PIECE + newline;
  if (text.length <= longest) return null;
  // Never between the two halves of a surrogate pair.
  const high = text.charCodeAt(longest - 1);
  return high >= 0xd800 && high <= 0xdbff ? longest - 1 : longest;
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** One piece as HTML: escaped text, nothing the model wrote is markup. The newline after <pre>
 *  is the one HTML's parser drops, so a piece that starts with a line break keeps it. */
export const rawPieceHtml = (piece: string): string => `<pre class="raw-block">\n${escapeHtml(piece)}</pre>\n`;
