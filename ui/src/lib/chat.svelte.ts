import type {
  ChatSummary,
  CompareEvent,
  Decision,
  IpcError,
  IpcErrorKind,
  ModelInfo,
  ModelLoading,
  ModelTarget,
  SamplingParams,
  StoredMessage,
  TokenProbs,
  UnavailableServer,
} from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { DraftAttachments } from './attachments.svelte';
import { SentThumbnails } from './sent-thumbnails.svelte';
import { draftKey, draftSendable } from './attachments';
import { animationFrames, type FrameScheduler } from './batcher';
import { chatAfterRemoval, replaceChat, sortChats } from './chat-list';
import { errorMessage } from './format';
import { DraftReadAhead, browserTimers, type Timers } from './read-ahead';
import { TurnRunner } from './turn-runner';
import { callAnswered, callAskedAgain, type LiveCalls } from './tool-calls';
import { findMessage, type TurnRequest } from './turns';

export type Generating = { chatId: number; stopping: boolean };

/** What the chat store asks of the chats' local models (ChatModelStore, set by the app). */
export type ChatModels = {
  /** A chat was opened (its model may need loading). */
  opened(chatId: number): void;
  /** Before a comparison: the chat's model loaded if the backend finds it must be (rejects with why not). */
  ready(chatId: number): Promise<void>;
  /** A turn of chat `chatId` is loading its model first, as its events say: shown as the load under way. */
  turnLoad(chatId: number): TurnLoad;
  /** A turn of chat `chatId` could not ready its model: `error` says why (kept for its model button). */
  failed(chatId: number, error: unknown): void;
};

/** The load a turn does before its reply, followed from the turn's `modelLoading` events. */
export type TurnLoad = {
  progress(load: ModelLoading): void;
  /** The load is over: it ended (the turn went on) or failed with `error`. */
  end(error?: unknown): void;
  /** Give the load up (Stop while it runs): the turn then fails without a reply. */
  cancel(): Promise<void>;
};

/** Nothing to load (the store on its own, as in its unit tests). */
const NO_CHAT_MODELS: ChatModels = {
  opened: () => {},
  ready: () => Promise.resolve(),
  turnLoad: () => ({ progress: () => {}, end: () => {}, cancel: () => Promise.resolve() }),
  failed: () => {},
};

/**
 * Why a remote reply failed, shown on the reply with a Retry button. `retryAt` (Unix ms): when the
 * provider said it takes requests again (rate limits); null when it did not say.
 */
export type ReplyFailure = { chatId: number; error: IpcError; retryAt: number | null };

/** The user message being edited in place, and the text typed so far. */
export type Editing = { messageId: number; text: string };

/** All chat-screen state; components only render it. A turn's streaming is TurnRunner's (turn-runner.ts). */
export class ChatStore {
  /** Pinned first, then the most recently updated. */
  chats = $state<ChatSummary[]>([]);
  activeChatId = $state<number | null>(null);
  /** The active chat's path on show (root to current leaf), chronological. */
  messages = $state<StoredMessage[]>([]);
  model = $state<ModelInfo | null>(null);
  /** True once the first list_chats/active_model round trip ended (either way). */
  ready = $state(false);
  loadingMessages = $state(false);
  draft = $state('');
  /** The files the draft carries (the composer's chips). */
  readonly attachments: DraftAttachments;
  /** The thumbnails on sent messages' image chips. */
  readonly thumbnails: SentThumbnails;
  editing = $state<Editing | null>(null);
  error = $state<string | null>(null);
  /** The kind of the IPC error in `error`, when it was one (the banner offers what to do about some). */
  errorKind = $state<IpcErrorKind | null>(null);
  /** Failed remote replies of this session by message id; a chat's are dropped when its next turn starts. */
  failures = $state<Record<number, ReplyFailure>>({});
  generating = $state<Generating | null>(null);
  /** The tool calls of the turn under way, by the reply that wrote them (asked, running, …); TurnRunner keeps it. */
  liveCalls = $state<LiveCalls>({});
  /** How far the search writing the turn's reply has got (a beam search or consensus, whose reply comes whole); TurnRunner keeps it. */
  searching = $state<{ reply: number; tokens: number } | null>(null);
  /** The servers whose tools the last turn could not offer (one asks to sign in, one failed), with its chat. */
  toolsUnavailable = $state<{ chatId: number; servers: UnavailableServer[] } | null>(null);

  activeChat = $derived(this.chats.find((c) => c.id === this.activeChatId) ?? null);
  generatingHere = $derived(this.generating !== null && this.generating.chatId === this.activeChatId);
  /** One turn at a time: the backend answers `busy` to a second one. */
  busy = $derived(this.generating !== null);

  /** The draft has text or files, all of them read, and no turn runs. */
  get canSend(): boolean {
    return draftSendable(this.draft, this.attachments.items) && this.generating === null;
  }

  /** Loads each chat's model as it opens and before its turns. */
  models: ChatModels = NO_CHAT_MODELS;

  readonly #api: HearthApi;
  readonly #readAhead: DraftReadAhead;
  /** The composer's text as last typed (what `draftTyped` was given). */
  #typed = '';
  readonly #turns: TurnRunner;
  #loadToken = 0;
  #loading: Promise<void> = Promise.resolve();
  #turnsStarted = 0;

  constructor(api: HearthApi, frames: FrameScheduler = animationFrames, timers: Timers = browserTimers) {
    this.#api = api;
    this.attachments = new DraftAttachments(api, () => this.#readDraftAhead());
    this.thumbnails = new SentThumbnails(api);
    this.#readAhead = new DraftReadAhead((_draft, stillTyping) => this.#prefillDraft(stillTyping), timers);
    this.#turns = new TurnRunner(this, api, frames, (chatId, refresh) => this.#loadMessages(chatId, refresh));
  }

  async init(): Promise<void> {
    const [chats, model] = await Promise.allSettled([this.#api.listChats(), this.#api.activeModel()]);
    if (model.status === 'fulfilled') this.model = model.value;
    else this.showError(model.reason);
    if (chats.status === 'fulfilled') {
      this.chats = chats.value;
      await this.#openFirst();
    } else {
      this.showError(chats.reason);
    }
    this.ready = true;
  }

  /** Apply the backend's own changes to chats (automatic titles); resolves to the unsubscribe. */
  async listen(): Promise<() => void> {
    try {
      return await this.#api.onChatUpdated((chat) => this.applyChatUpdate(chat));
    } catch (e) {
      // Not worth a banner: titles still arrive with the next list_chats.
      console.warn('background chat updates are not available:', errorMessage(e));
      return () => {};
    }
  }

  showError(error: unknown): void {
    this.error = errorMessage(error);
    const kind = (error as Partial<IpcError> | null)?.kind;
    this.errorKind = typeof kind === 'string' ? kind : null;
  }

  dismissError(): void {
    this.error = null;
    this.errorKind = null;
  }

  async refreshChats(): Promise<void> {
    try {
      this.chats = await this.#api.listChats();
    } catch (e) {
      this.showError(e);
    }
  }

  /** Chats were added behind the list's back (an import): read it again; open the first when none is open. */
  async chatsAdded(): Promise<void> {
    await this.refreshChats();
    await this.#openFirst();
  }

  async refreshModel(): Promise<void> {
    try {
      this.model = await this.#api.activeModel();
    } catch (e) {
      this.showError(e);
    }
  }

  /**
   * The user changed the composer's text: the backend reads the draft ahead (the local model
   * prefills the chat and what was typed so far), paced by DraftReadAhead; never while this chat's
   * reply is generated.
   */
  draftTyped(draft: string): void {
    this.#typed = draft;
    this.#readDraftAhead();
  }

  /** The draft as DraftReadAhead paces it: its text, and the files attached (a file attached before a word is typed is read at once). */
  #readDraftAhead(): void {
    if (this.activeChatId === null || this.generatingHere) this.#readAhead.cancel();
    else this.#readAhead.typed(draftKey(this.#typed, this.attachments.attached));
  }

  #prefillDraft(stillTyping: boolean): void {
    const chatId = this.activeChatId;
    if (chatId === null || this.generating?.chatId === chatId) return;
    const files = $state.snapshot(this.attachments.attached);
    // Only a head start: a failure changes nothing for the user.
    this.#api.prefillDraft(chatId, this.#typed, files, stillTyping).catch((e) => console.debug('draft not read ahead:', errorMessage(e)));
  }

  /** Show `chatId`; resolves once its messages are loaded (also when it already was the active chat). */
  selectChat(chatId: number): Promise<void> {
    if (chatId === this.activeChatId) return this.#loading;
    this.#readAhead.reset();
    this.activeChatId = chatId;
    this.messages = [];
    this.editing = null;
    this.models.opened(chatId);
    return this.#loadMessages(chatId);
  }

  async newChat(): Promise<ChatSummary | null> {
    try {
      const chat = await this.#api.createChat();
      this.chats = sortChats([chat, ...this.chats.filter((c) => c.id !== chat.id)]);
      this.#showNothing();
      this.activeChatId = chat.id;
      this.models.opened(chat.id);
      return chat;
    } catch (e) {
      this.showError(e);
      return null;
    }
  }

  applyChatUpdate(chat: ChatSummary): void {
    this.chats = replaceChat(this.chats, chat);
  }

  renameChat(chatId: number, title: string): Promise<boolean> {
    return this.#updateChat(() => this.#api.renameChat(chatId, title.trim()));
  }

  pinChat(chatId: number, pinned: boolean): Promise<boolean> {
    return this.#updateChat(() => this.#api.pinChat(chatId, pinned));
  }

  setSystemPrompt(chatId: number, prompt: string): Promise<boolean> {
    return this.#updateChat(() => this.#api.setSystemPrompt(chatId, prompt));
  }

  /** Where the chat's next reply comes from; allowed at any point, even while a reply streams. */
  setChatModel(chatId: number, target: ModelTarget): Promise<boolean> {
    return this.#updateChat(() => this.#api.setChatModel(chatId, target));
  }

  /** Delete a chat; when it was on show, the next one in the list (or none) is shown instead. */
  async deleteChat(chatId: number): Promise<boolean> {
    try {
      await this.#api.deleteChat(chatId);
    } catch (e) {
      this.showError(e);
      return false;
    }
    const next = chatAfterRemoval(this.chats, chatId);
    this.chats = this.chats.filter((c) => c.id !== chatId);
    if (this.activeChatId === chatId) {
      if (next) await this.selectChat(next.id);
      else this.#showNothing();
    }
    return true;
  }

  /** Send the draft and its files to the active chat (creating one if none). Resolves when the call ended. */
  async send(): Promise<boolean> {
    if (!this.canSend) return false;

    let chatId = this.activeChatId;
    if (chatId === null) {
      const chat = await this.newChat();
      if (!chat) return false;
      chatId = chat.id;
    }
    const content = this.draft.trim();
    this.draft = '';
    this.#typed = '';
    const attachments = this.attachments.take();
    this.thumbnails.keep(this.attachments.takenPreviews);
    return this.#runTurn(chatId, { kind: 'send', content, attachments });
  }

  startEdit(messageId: number): void {
    const message = this.#find(messageId);
    if (message?.role === 'user') this.editing = { messageId, text: message.content };
  }

  cancelEdit(): void {
    this.editing = null;
  }

  /** Send the edited text as a new version of its message (its files kept), and stream a reply to it. */
  async saveEdit(): Promise<boolean> {
    const editing = this.editing;
    if (!editing || this.activeChatId === null || this.generating !== null) return false;
    const content = editing.text.trim();
    // A message with files may lose its text: its new version keeps them.
    if (!content && !this.#find(editing.messageId)?.attachments.length) return false;
    this.editing = null;
    return this.#runTurn(this.activeChatId, { kind: 'edit', messageId: editing.messageId, content });
  }

  regenerate(messageId: number): Promise<boolean> {
    return this.#turnOnActive({ kind: 'regenerate', messageId });
  }

  continueReply(messageId: number): Promise<boolean> {
    return this.#turnOnActive({ kind: 'continue', messageId });
  }

  /**
   * A new version of reply `messageId` that keeps its first `at` tokens, takes alternative `token` there and
   * writes on; its opening (as the backend wrote it: `replyStarted`) shows while it is written, as a
   * regenerated reply streams.
   */
  branchReply(messageId: number, at: number, token: number): Promise<boolean> {
    return this.#turnOnActive({ kind: 'branch', messageId, at, token });
  }

  /** Run the tool calls of reply `messageId` again, each asked about with its arguments to edit; the model answers the new results. */
  rerunToolCalls(messageId: number): Promise<boolean> {
    return this.#turnOnActive({ kind: 'rerun', messageId });
  }

  /** Reply `messageId`'s tokens with the distribution each was drawn from (none: empty); rejects with an IpcError. */
  tokenProbs(messageId: number): Promise<TokenProbs[]> {
    return this.#api.tokenProbs(messageId);
  }

  /**
   * Answer the question of reply `messageId` once per settings in `variants` (2 to 4), side by side: each answer
   * a new version of the reply, its events tagged with its column and handed to `onEvent` (the Compare view
   * shows them; the chat does not). The chat is generating meanwhile (one turn at a time; Stop stops them
   * all). Resolves true once all have ended, the path read again (the backend shows the last answer); false
   * when a turn is already running; rejects with the backend's refusal (nothing started then).
   */
  async compare(messageId: number, variants: SamplingParams[], onEvent: (event: CompareEvent) => void): Promise<boolean> {
    const chatId = this.activeChatId;
    if (chatId === null || this.busy) return false;
    this.#beginTurn(chatId);
    try {
      await this.models.ready(chatId);
      await this.#api.compareReplies(chatId, messageId, variants, onEvent);
    } finally {
      if (this.generating?.chatId === chatId) this.generating = null;
    }
    void this.refreshChats();
    // The answers are new versions of the reply, the last on show.
    if (this.activeChatId === chatId) await this.#loadMessages(chatId, true);
    return true;
  }

  async stop(): Promise<void> {
    const g = this.generating;
    if (!g || g.stopping) return;
    g.stopping = true;
    try {
      // A turn still loading its model gives the load up; one writing its reply stops it.
      await Promise.all([this.#turns.stopLoad(), this.#api.stopGeneration(g.chatId)]);
    } catch (e) {
      if (this.generating === g) g.stopping = false;
      this.showError(e);
    }
  }

  /**
   * The user's word on call `index` of reply `reply`, which the backend waits for (`toolApproval`):
   * allowed (with the arguments as they stand), allowed for the session, or denied. The call shows
   * the answer at once; when it does not reach the backend, it is asked again and the error said.
   */
  async answerToolCall(reply: number, index: number, decision: Decision): Promise<boolean> {
    const chatId = this.generating?.chatId;
    if (chatId === undefined) return false;
    this.liveCalls = callAnswered(this.liveCalls, reply, index, decision);
    try {
      await this.#api.answerToolCall(chatId, decision);
      return true;
    } catch (e) {
      // Stop came first: the call is over, nothing to ask again.
      if (this.generating?.chatId === chatId && !this.generating.stopping) {
        this.liveCalls = callAskedAgain(this.liveCalls, reply, index);
        this.showError(e);
      }
      return false;
    }
  }

  /** Show the branch through `messageId` (one of a message's versions). */
  switchBranch(messageId: number): Promise<boolean> {
    return this.#replacePath((chatId) => this.#api.switchBranch(chatId, messageId));
  }

  /** Delete a message and everything under it; the backend says which path is shown then. */
  deleteMessage(messageId: number): Promise<boolean> {
    if (this.editing?.messageId === messageId) this.editing = null;
    return this.#replacePath((chatId) => this.#api.deleteMessage(chatId, messageId));
  }

  /**
   * Show message `messageId` of chat `chatId` (a search result): open the chat and, when the
   * message is on another branch, switch to it. True when the message is on the path then.
   */
  async openMessage(chatId: number, messageId: number): Promise<boolean> {
    await this.selectChat(chatId);
    if (this.activeChatId !== chatId) return false;
    if (this.#find(messageId)) return true;
    if (this.generating?.chatId === chatId) {
      this.showError('That message is on another branch: open it once the reply has finished.');
      return false;
    }
    return (await this.switchBranch(messageId)) && this.#find(messageId) !== undefined;
  }

  #turnOnActive(turn: TurnRequest): Promise<boolean> {
    if (this.activeChatId === null || this.generating !== null) return Promise.resolve(false);
    return this.#runTurn(this.activeChatId, turn);
  }

  /** Every turn starts here; TurnRunner follows it to its end. */
  #runTurn(chatId: number, turn: TurnRequest): Promise<boolean> {
    this.#beginTurn(chatId);
    return this.#turns.run(chatId, turn);
  }

  /** Chat `chatId` is generating from now on (a turn, or a comparison's). */
  #beginTurn(chatId: number): void {
    this.dismissError();
    this.toolsUnavailable = null; // the turn says it again if they still are
    // A new attempt: earlier failures of this chat are history (their replies still say "Failed").
    this.failures = Object.fromEntries(Object.entries(this.failures).filter(([, f]) => f.chatId !== chatId));
    this.#readAhead.reset(); // the draft was sent, or a reply is under way: nothing to read ahead
    this.#turnsStarted += 1;
    this.generating = { chatId, stopping: false };
  }

  async #updateChat(request: () => Promise<ChatSummary>): Promise<boolean> {
    try {
      this.applyChatUpdate(await request());
      return true;
    } catch (e) {
      this.showError(e);
      return false;
    }
  }

  /**
   * Replace the active chat's path with what `request` returns; never while this chat streams, as
   * its reply would land on the wrong path.
   */
  async #replacePath(request: (chatId: number) => Promise<StoredMessage[]>): Promise<boolean> {
    const chatId = this.activeChatId;
    if (chatId === null || this.generating?.chatId === chatId) return false;
    const token = ++this.#loadToken;
    try {
      const path = await request(chatId);
      if (token === this.#loadToken) this.messages = path;
      return true;
    } catch (e) {
      this.showError(e);
      return false;
    }
  }

  /** With no chat open, show the one at the top of the list (if any). */
  async #openFirst(): Promise<void> {
    if (this.activeChatId === null && this.chats.length > 0) await this.selectChat(this.chats[0].id);
  }

  #showNothing(): void {
    this.#readAhead.reset();
    this.#loadToken += 1; // drop any in-flight load of the previous chat
    this.activeChatId = null;
    this.messages = [];
    this.editing = null;
    this.loadingMessages = false;
  }

  /**
   * Read the active path. `refresh`: the chat is already on show (a turn added siblings), so keep
   * it on screen meanwhile, and drop the answer if another turn started since.
   */
  #loadMessages(chatId: number, refresh = false): Promise<void> {
    const token = ++this.#loadToken;
    const turns = this.#turnsStarted;
    if (!refresh) this.loadingMessages = true;
    const load = async () => {
      try {
        const messages = await this.#api.listMessages(chatId);
        if (token !== this.#loadToken || (refresh && turns !== this.#turnsStarted)) return;
        this.messages = messages;
        this.#turns.restore();
      } catch (e) {
        if (token === this.#loadToken) this.showError(e);
      } finally {
        if (token === this.#loadToken) this.loadingMessages = false;
      }
    };
    this.#loading = load();
    return this.#loading;
  }

  #find(id: number): StoredMessage | undefined {
    return findMessage(this.messages, id);
  }
}
