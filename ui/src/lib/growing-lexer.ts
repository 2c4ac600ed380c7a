import type { TokensList } from 'marked';

/**
 * Lexes replies that grow (a streamed reply, its reasoning) by lexing again only their end.
 *
 * Lexing is most of an update's script in the real window: WebKitGTK runs marked's regular
 * expressions in JavaScriptCore's regex interpreter, and every update lexed the whole reply, so an
 * update cost more the longer the reply got (perf of the web process while a 9,000-character reply
 * streamed: two thirds of its CPU in the regex interpreter and the memory it churns). A text that
 * starts with one lexed before keeps that lex's blocks up to a blank line before its last
 * `RELEXED_BLOCKS` blocks: appended text cannot change them. The rest is lexed on its own, from the
 * start of a block that follows a blank line, where marked keeps no state from the blocks before.
 *
 * A whole lex where that would not hold: reference-link definitions (one written later turns
 * earlier text into links), carriage returns (marked rewrites them, so its tokens no longer spell
 * the text), and any lex whose tokens do not spell their text exactly.
 */
export class GrowingLexer {
  /** Recent lexes whose tokens spell their text exactly, the newest last. */
  readonly #recent: Lexed[] = [];

  constructor(
    readonly lex: (source: string) => TokensList,
    /** How many texts may grow at once (Compare's columns, a reply's reasoning and answer). */
    readonly kept = 8,
    /**
     * A block being written that grows past this many characters is not lexed again at each
     * update: it becomes one `RAW_BLOCK` token (its text as written) until the text is lexed
     * whole. Lexing such a block is what made hostile replies (a 500-row table, lists nested 200
     * deep, a 100,000-character line) cost the window 100–200 ms an update.
     */
    readonly longestLexedBlock = Infinity,
    /** Milliseconds, to pace lexing such a block again by what it cost. */
    readonly now: () => number = () => performance.now(),
  ) {}

  lexGrowing(source: string): TokensList {
    const index = this.#longestPrefix(source);
    const before = index < 0 ? null : this.#recent.splice(index, 1)[0];
    const started = this.now();
    const slowAt = before ? slowBlockStart(before) : null;
    const lexed = (before && this.#relexEnd(before.tokens, before.source, source, started, slowAt)) ?? this.lex(source);
    const tokens = this.#rawIfOverlong(lexed, source.length, started, slowAt);
    if (!source.includes('\r') && spells(tokens, source)) {
      this.#recent.push({ source, tokens, spentBefore: before?.spent });
      if (this.#recent.length > this.kept) this.#recent.shift();
    }
    return tokens;
  }

  /** The caller took `ms` to lex and show `source` (the text last lexed): a block being written
   *  that cost more than `SLOW_BLOCK_MS` in two updates in a row is shown raw from the next one. */
  spent(source: string, ms: number): void {
    for (let i = this.#recent.length - 1; i >= 0; i--) {
      if (this.#recent[i].source === source) {
        this.#recent[i].spent = ms;
        return;
      }
    }
  }

  #longestPrefix(source: string): number {
    let best = -1;
    this.#recent.forEach(({ source: earlier }, i) => {
      if ((best < 0 || earlier.length > this.#recent[best].source.length) && source.startsWith(earlier)) best = i;
    });
    return best;
  }

  #relexEnd(before: TokensList, earlier: string, source: string, now: number, slowAt: number | null): TokensList | null {
    if (hasLinks(before) || source.includes('\r')) return null;
    const last = lastBlock(before);
    if (last >= 0) {
      const start = offsetOf(before, last);
      const length = source.length - start;
      // Lexed again once it grew by a quarter, and no sooner than RAW_RELEX_PAUSE times what its
      // last lex cost: so a block that ended (a closed code fence) does not keep what follows it
      // raw, at a few lexes in all and a small share of the time (lists nested 200 deep cost
      // JavaScriptCore 100–400 ms a lex).
      const was = before[last].type === RAW_BLOCK ? (before[last] as RawBlock) : null;
      const lexedAt = was?.lexedAt ?? length;
      const due = length >= lexedAt * RAW_RELEX_GROWTH && now >= (was?.lexedTime ?? 0) + RAW_RELEX_PAUSE * (was?.lexCost ?? 0);
      const slow = slowAt === start;
      if (length > (slow ? SLOW_BLOCK_MIN : this.longestLexedBlock) && !due) {
        const raw = source.slice(start);
        const block: RawBlock = { type: RAW_BLOCK, raw, text: raw, lexedAt, lexedTime: was?.lexedTime ?? now, lexCost: was?.lexCost ?? 0, slow };
        return Object.assign([...before.slice(0, last), block], { links: before.links });
      }
    }
    const from = keptBlocks(before);
    if (from <= 0) return null;
    const offset = offsetOf(before, from);
    if (offset > earlier.length) return null;
    const end = this.lex(source.slice(offset));
    if (hasLinks(end)) return null;
    return Object.assign([...before.slice(0, from), ...end], { links: end.links });
  }

  /** The last block stays raw while it is still longer than `longestLexedBlock`: lexed again only
   *  to find out whether it ended, it is not rendered (a 500-row table's DOM built and laid out a
   *  few times a reply, for as long as an update). */
  #rawIfOverlong(tokens: TokensList, length: number, lexedTime: number, slowAt: number | null): TokensList {
    const last = lastBlock(tokens);
    if (last < 0 || tokens[last].type === RAW_BLOCK) return tokens;
    const start = offsetOf(tokens, last);
    const slow = slowAt === start;
    if (length - start <= (slow ? SLOW_BLOCK_MIN : this.longestLexedBlock)) return tokens;
    const raw = tokens.slice(last).map((t) => t.raw).join('');
    const block: RawBlock = { type: RAW_BLOCK, raw, text: raw, lexedAt: length - start, lexedTime, lexCost: this.now() - lexedTime, slow };
    return Object.assign([...tokens.slice(0, last), block], { links: tokens.links });
  }
}

/** Blocks re-lexed at the end of a growing text: the one being written (a paragraph an underline
 *  turns into a heading, a list the next item continues) and, for margin, the one before it. */
export const RELEXED_BLOCKS = 2;

/** The type of the token that stands for an overlong block being written (see `longestLexedBlock`). */
export const RAW_BLOCK = 'rawBlock';

/** An overlong block being written, as written: its length when it was last lexed, when that
 *  was, and what the lex cost (ms). */
type RawBlock = { type: typeof RAW_BLOCK; raw: string; text: string; lexedAt: number; lexedTime: number; lexCost: number; slow: boolean };

/** An overlong block is lexed again once it grew by this factor since it was last lexed… */
const RAW_RELEX_GROWTH = 1.25;
/** …and this many times what that lex cost has passed: lexing it takes at most ~2 % of a core. */
const RAW_RELEX_PAUSE = 50;

/** A block being written whose update cost the window more than this (ms, lexing and rendering it)
 *  is shown raw from then on, once past `SLOW_BLOCK_MIN` characters: a 300-row table, rendered at
 *  every update below `longestLexedBlock`, cost JavaScriptCore and WebKit ~50 ms an update. */
export const SLOW_BLOCK_MS = 20;
export const SLOW_BLOCK_MIN = 2_000;

/** A lex kept to grow from: what showing it cost the caller (ms), and the update before it. */
type Lexed = { source: string; tokens: TokensList; spent?: number; spentBefore?: number };

/** Where the block being written starts in `text`, when that block is to be shown raw for what it
 *  costs: it was, or its last two updates each cost more than `SLOW_BLOCK_MS` (one alone may be a
 *  garbage collection or a cold JIT). */
function slowBlockStart({ tokens, spent, spentBefore }: Lexed): number | null {
  const last = lastBlock(tokens);
  if (last < 0) return null;
  const start = offsetOf(tokens, last);
  if (tokens[last].type === RAW_BLOCK) return (tokens[last] as RawBlock).slow ? start : null;
  const cost = Math.min(spent ?? 0, spentBefore ?? 0);
  return cost > SLOW_BLOCK_MS && tokens[last].raw.length > SLOW_BLOCK_MIN ? start : null;
}

/** The index of the last block (not a blank line) of `tokens`, -1 if none. */
function lastBlock(tokens: TokensList): number {
  let i = tokens.length - 1;
  while (i >= 0 && tokens[i].type === 'space') i--;
  return i;
}

/** Where token `index` starts in the text `tokens` spell. */
function offsetOf(tokens: TokensList, index: number): number {
  let offset = 0;
  for (let i = 0; i < index; i++) offset += tokens[i].raw.length;
  return offset;
}

/** How many of `tokens` are kept: those before the last `RELEXED_BLOCKS` blocks, up to a blank line. */
function keptBlocks(tokens: TokensList): number {
  let i = tokens.length;
  for (let blocks = 0; i > 0 && blocks < RELEXED_BLOCKS; ) if (tokens[--i].type !== 'space') blocks++;
  while (i > 0 && tokens[i - 1].type !== 'space') i--;
  return i;
}

const hasLinks = (tokens: TokensList) => Object.keys(tokens.links).length > 0;

function spells(tokens: TokensList, source: string): boolean {
  let joined = '';
  for (const token of tokens) joined += token.raw;
  return joined === source;
}
