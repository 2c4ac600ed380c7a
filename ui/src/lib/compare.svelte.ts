import type { ChatEvent, CompareEvent, Preset, SamplingParams, StoredMessage, Strategy } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import type { ChatStore } from './chat.svelte';
import {
  MAX_COLUMNS,
  MIN_COLUMNS,
  buildVariants,
  columnSummary,
  defaultColumns,
  nextColumn,
  refusedColumn,
  type Base,
  type ColumnSetup,
  type ColumnSummary,
  type CompareContext,
} from './compare';
import { errorMessage, sentence } from './format';
import { TERMINAL_EVENT_GRACE_MS } from './turns';

/**
 * closed; loading (the chat's settings and presets on their way); setup (choosing the columns, a refusal shown
 * there); running (the answers streaming); done (each ended: one can be kept).
 */
export type ComparePhase = 'closed' | 'loading' | 'setup' | 'running' | 'done';

/** One column's answer as it streams. */
export type ColumnResult = {
  /** The new version it is written into, once the backend named it. */
  messageId: number | null;
  text: string;
  /** streaming until its finished or failed event; then the saved message's status. */
  status: 'waiting' | StoredMessage['status'];
  /** The saved answer (its stats), once it ended. */
  message: StoredMessage | null;
  /** Why it failed, in words. */
  error: string | null;
  /** Tokens its search has written (a beam search, a consensus: the text comes whole at the end); null when none said. */
  searched: number | null;
};

const waiting = (): ColumnResult => ({ messageId: null, text: '', status: 'waiting', message: null, error: null, searched: null });

/**
 * The Compare view: a reply's question answered again with 2 to 4 settings side by side. The columns start
 * from the chat's settings or a preset, each with a strategy; Run sends them whole (compare_replies through the
 * ChatStore, so the chat is busy meanwhile and Stop stops them all); each answer streams into its column and,
 * once all ended, "Keep this" shows that version in the chat (switch_branch).
 */
export class CompareStore {
  phase = $state<ComparePhase>('closed');
  /** The reply compared (its question is answered again). */
  messageId = $state<number | null>(null);
  /** The question, as the chat shows it. */
  question = $state('');
  chatParams = $state.raw<SamplingParams | null>(null);
  /** Built-in presets first, then the user's. */
  presets = $state.raw<Preset[]>([]);
  columns = $state<ColumnSetup[]>([]);
  results = $state<ColumnResult[]>([]);
  /** Why loading failed. */
  loadError = $state<string | null>(null);
  /** A refusal (nothing ran) or why keeping one failed, in words. */
  error = $state<string | null>(null);
  /** The column the refusal is about. */
  refused = $state<number | null>(null);

  isOpen = $derived(this.phase !== 'closed');
  running = $derived(this.phase === 'running');
  context = $derived<CompareContext | null>(this.chatParams ? { chat: this.chatParams, presets: this.presets } : null);
  summaries = $derived<ColumnSummary[]>(this.context ? this.columns.map((c) => columnSummary(c, this.context!)) : []);
  canAdd = $derived(this.phase === 'setup' && this.columns.length < MAX_COLUMNS);
  canRemove = $derived(this.phase === 'setup' && this.columns.length > MIN_COLUMNS);
  /** The answer on show in the chat now: the last one saved (the backend shows the last it started). */
  onShow = $derived(lastSaved(this.results));

  readonly #api: HearthApi;
  readonly #chat: ChatStore;
  #token = 0;
  #resolved = false;
  #graceTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(api: HearthApi, chat: ChatStore) {
    this.#api = api;
    this.#chat = chat;
  }

  /** Whether Run can start: set up, and no reply being written (this chat's or another's). */
  get canRun(): boolean {
    return this.phase === 'setup' && this.context !== null && !this.#chat.busy;
  }

  get stopping(): boolean {
    return this.running && (this.#chat.generating?.stopping ?? false);
  }

  /** Open the view for reply `messageId` of the chat on show; reads the chat's settings and the presets. */
  async open(messageId: number): Promise<void> {
    const chatId = this.#chat.activeChatId;
    if (chatId === null || this.running) return;
    const token = ++this.#token;
    const path = this.#chat.messages;
    const reply = path.find((m) => m.id === messageId);
    this.question = path.find((m) => m.id === reply?.parentId)?.content ?? '';
    this.messageId = messageId;
    this.results = [];
    this.error = null;
    this.refused = null;
    this.phase = 'loading';
    await this.#load(chatId, token);
  }

  /** Read the settings again (after a failed load). */
  retry(): Promise<void> {
    const chatId = this.#chat.activeChatId;
    if (chatId === null || this.phase !== 'loading') return Promise.resolve();
    return this.#load(chatId, ++this.#token);
  }

  async #load(chatId: number, token: number): Promise<void> {
    this.loadError = null;
    try {
      const settings = await this.#api.getSampling({ kind: 'chat', id: chatId });
      if (token !== this.#token) return;
      this.chatParams = settings.current;
      this.presets = settings.presets;
      this.columns = defaultColumns(settings.current);
      this.phase = 'setup';
    } catch (e) {
      if (token === this.#token) this.loadError = errorMessage(e);
    }
  }

  setBase(index: number, base: Base): void {
    if (this.phase === 'setup' && this.columns[index]) this.#edit(() => (this.columns[index].base = base));
  }

  setStrategy(index: number, strategy: Strategy): void {
    if (this.phase === 'setup' && this.columns[index]) this.#edit(() => (this.columns[index].strategy = strategy));
  }

  addColumn(): void {
    if (this.canAdd) this.#edit(() => this.columns.push(nextColumn(this.columns, this.presets)));
  }

  removeColumn(index: number): void {
    if (this.canRemove) this.#edit(() => this.columns.splice(index, 1));
  }

  /** A changed setup: the refusal was about the one before. */
  #edit(change: () => void): void {
    change();
    this.error = null;
    this.refused = null;
  }

  /** Answer with every column's settings; a refusal puts the view back to its setup, saying why. */
  async run(): Promise<void> {
    const context = this.context;
    if (!this.canRun || !context || this.messageId === null) return;
    const token = ++this.#token;
    const variants = buildVariants(this.columns, context);
    this.error = null;
    this.refused = null;
    this.results = variants.map(waiting);
    this.#resolved = false;
    this.phase = 'running';
    try {
      const ran = await this.#chat.compare(this.messageId, variants, (event) => this.#onEvent(token, event));
      if (token !== this.#token) return;
      if (!ran) {
        this.phase = 'setup';
        this.error = 'A reply is being written: wait for it to finish, then run the comparison.';
        return;
      }
      this.#resolved = true;
      if (!this.#settle()) {
        // Channel events and the command's answer travel apart: give the last events a moment.
        this.#graceTimer = setTimeout(() => {
          this.#graceTimer = null;
          if (token === this.#token) this.#endUnfinished();
        }, TERMINAL_EVENT_GRACE_MS);
      }
    } catch (e) {
      if (token !== this.#token) return;
      const words = sentence(errorMessage(e));
      if (this.results.every((r) => r.messageId === null)) {
        // Refused before anything started: back to the columns, the one it names marked.
        this.phase = 'setup';
        this.results = [];
        this.error = words;
        this.refused = refusedColumn(errorMessage(e));
      } else {
        this.error = words;
        this.#endUnfinished(words);
      }
    }
  }

  /** Stop every column (the chat's one turn). */
  stop(): Promise<void> {
    return this.running ? this.#chat.stop() : Promise.resolve();
  }

  /** Back to the columns to change them and run again (the answers stay as versions of the reply). */
  again(): void {
    if (this.phase !== 'done') return;
    this.results = [];
    this.error = null;
    this.phase = 'setup';
  }

  /** Show column `index`'s answer in the chat, and close. False (and `error`) when that failed. */
  async keep(index: number): Promise<boolean> {
    const id = this.results[index]?.messageId;
    if (this.phase !== 'done' || id === null || id === undefined) return false;
    this.error = null;
    if (await this.#chat.switchBranch(id)) {
      this.close();
      return true;
    }
    this.error = this.#chat.error ?? 'That version could not be shown.';
    return false;
  }

  /** Close (never while the answers are written); the answer on show stays so. */
  close(): void {
    if (this.running) return;
    this.#token += 1;
    this.#clearGrace();
    this.phase = 'closed';
    this.messageId = null;
    this.results = [];
    this.columns = [];
    this.error = null;
    this.refused = null;
    this.loadError = null;
  }

  #onEvent(token: number, { column, event }: CompareEvent): void {
    const result = this.results[column];
    if (token !== this.#token || !result || result.message !== null || result.error !== null) return;
    apply(result, event);
    if (this.#resolved) this.#settle();
  }

  /** All columns ended (and the call returned): done. */
  #settle(): boolean {
    if (this.phase !== 'running' || !this.results.every(ended)) return false;
    this.#clearGrace();
    this.phase = 'done';
    return true;
  }

  /** The call ended without some columns' last word: they end as they are (saved ones can still be kept). */
  #endUnfinished(why = 'This column ended without a word from the model.'): void {
    for (const r of this.results) {
      if (ended(r)) continue;
      if (r.messageId === null) [r.status, r.error] = ['failed', why];
      else r.status = 'stopped';
    }
    this.#clearGrace();
    this.phase = 'done';
  }

  #clearGrace(): void {
    if (this.#graceTimer !== null) clearTimeout(this.#graceTimer);
    this.#graceTimer = null;
  }
}

/** The index of the last column whose answer was saved; -1 when none was. */
export function lastSaved(results: readonly ColumnResult[]): number {
  for (let i = results.length - 1; i >= 0; i--) if (results[i].messageId !== null) return i;
  return -1;
}

function ended(r: ColumnResult): boolean {
  return r.status !== 'waiting' && r.status !== 'streaming';
}

/** One of a column's events, as ChatStore applies a turn's to its reply. */
function apply(result: ColumnResult, event: ChatEvent): void {
  switch (event.event) {
    case 'replyStarted':
      result.messageId = event.data.messageId;
      result.status = 'streaming';
      break;
    case 'delta':
      result.text += event.data.text;
      break;
    case 'searching':
      result.searched = event.data.tokens;
      break;
    case 'finished':
      result.message = event.data.message;
      result.messageId = event.data.message.id;
      result.text = event.data.message.content;
      result.status = event.data.message.status;
      break;
    case 'failed': {
      const { error, message } = event.data;
      result.error = sentence(errorMessage(error));
      if (message) {
        result.message = message;
        result.messageId = message.id;
        result.text = message.content;
      }
      result.status = 'failed';
      break;
    }
    case 'userSaved':
      break;
  }
}
