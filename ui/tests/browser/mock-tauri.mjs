/**
 * In-page mock of the Tauri IPC layer, installed with `page.addInitScript(installMockTauri, config)`
 * before the app loads. It defines `window.__TAURI_INTERNALS__` the way @tauri-apps/api/core uses it:
 *   - `invoke(cmd, args)`: args are JSON round-tripped like the real IPC, so a `Channel` arrives as
 *     the string "__CHANNEL__:<callbackId>" (Channel.toJSON);
 *   - `transformCallback(cb, once)` / `unregisterCallback(id)`: the callback registry;
 *   - channel messages are delivered by calling the channel's callback with `{ index, message }`,
 *     and the end of the channel with `{ index, end: true }` (what Rust's Channel drop sends).
 * Behind it sits an in-memory chat backend that streams replies in timed deltas.
 *
 * This function is serialized into the page: it must not reference anything outside itself.
 */
export function installMockTauri(config) {
  const clone = (v) => JSON.parse(JSON.stringify(v));
  const delay = (ms) => new Promise((r) => setTimeout(r, ms));

  const state = {
    model: config.model ?? null,
    chats: clone(config.chats ?? []),
    messages: clone(config.messages ?? []),
    nextId: 1000,
    /** chatId -> { stop: boolean } while a reply is generated */
    generating: new Map(),
    /** Replies to use for the next send_message calls (FIFO), then `defaultReply`. */
    replies: clone(config.replies ?? []),
    defaultReply: config.defaultReply ?? { text: 'Hello! How can I help you today?', chunkSize: 4, delayMs: 20 },
    /** cmd -> IpcError: the next call of that command rejects with it. */
    failNext: {},
    /** Every invoke, with its JSON payload. */
    calls: [],
    /** Contract violations noticed by the mock (wrong argument names or types). */
    contractErrors: [],
  };
  window.__hearthMock = state;

  const callbacks = new Map();
  let nextCallback = 1;
  function transformCallback(callback, once = false) {
    const id = nextCallback++;
    callbacks.set(id, (data) => {
      if (once) callbacks.delete(id);
      if (callback) callback(data);
    });
    return id;
  }
  function unregisterCallback(id) {
    callbacks.delete(id);
  }
  function runCallback(id, data) {
    const cb = callbacks.get(id);
    if (cb) cb(data);
  }

  function channel(arg) {
    const m = /^__CHANNEL__:(\d+)$/.exec(String(arg));
    if (!m) {
      state.contractErrors.push(`onEvent is not a serialized Channel: ${JSON.stringify(arg)}`);
      throw { kind: 'invalidInput', message: 'onEvent must be a Channel' };
    }
    const id = Number(m[1]);
    let index = 0;
    return {
      send(message) {
        runCallback(id, { index: index++, message: clone(message) });
      },
      end() {
        runCallback(id, { index, end: true });
      },
    };
  }

  function expectArgs(cmd, payload, spec) {
    for (const [name, type] of Object.entries(spec)) {
      if (typeof payload[name] !== type) {
        state.contractErrors.push(`${cmd}: argument ${name} should be ${type}, got ${JSON.stringify(payload[name])}`);
        throw { kind: 'invalidInput', message: `missing or invalid argument ${name}` };
      }
    }
  }

  function findChat(chatId) {
    const chat = state.chats.find((c) => c.id === chatId);
    if (!chat) throw { kind: 'notFound', message: `Chat ${chatId} does not exist.` };
    return chat;
  }

  const sortedChats = () => clone([...state.chats].sort((a, b) => b.updatedAt - a.updatedAt || b.id - a.id));

  function chunks(text, size) {
    const out = [];
    const chars = [...text];
    for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
    return out;
  }

  let clock = 1_700_000_000_000;
  const now = () => ++clock;

  async function sendMessage(payload) {
    expectArgs('send_message', payload, { chatId: 'number', content: 'string', onEvent: 'string' });
    const events = channel(payload.onEvent);
    const chat = findChat(payload.chatId);
    if (!state.model) throw { kind: 'noModel', message: 'No model is loaded.' };
    if (state.generating.size > 0) throw { kind: 'busy', message: 'A reply is already being generated.' };
    const reply = state.replies.shift() ?? state.defaultReply;
    const gen = { stop: false };
    state.generating.set(chat.id, gen);

    const user = { id: state.nextId++, chatId: chat.id, role: 'user', content: payload.content, status: 'complete', createdAt: now(), model: null, stats: null };
    state.messages.push(user);
    if (!chat.title) chat.title = payload.content.split('\n')[0].slice(0, 48);
    chat.updatedAt = now();
    const assistant = { id: state.nextId++, chatId: chat.id, role: 'assistant', content: '', status: 'streaming', createdAt: now(), model: state.model.name, stats: null };
    state.messages.push(assistant);

    await delay(5);
    events.send({ event: 'userSaved', data: { message: user } });
    await delay(reply.ttftMs ?? 40);
    events.send({ event: 'replyStarted', data: { messageId: assistant.id, model: state.model.name } });
    const started = performance.now();
    let tokens = 0;
    for (const piece of chunks(reply.text, reply.chunkSize ?? 4)) {
      await delay(reply.delayMs ?? 20);
      if (gen.stop) break;
      assistant.content += piece;
      tokens += 1;
      events.send({ event: 'delta', data: { text: piece } });
    }
    const seconds = Math.max((performance.now() - started) / 1000, 0.001);
    assistant.stats = { promptTokens: 24, cachedTokens: 8, completionTokens: tokens, ttftMs: reply.ttftMs ?? 40, decodeTps: tokens / seconds };
    chat.updatedAt = now();
    state.generating.delete(chat.id);
    if (reply.failWith && !gen.stop) {
      assistant.status = 'failed';
      events.send({ event: 'failed', data: { error: reply.failWith, message: assistant } });
    } else {
      assistant.status = gen.stop ? 'stopped' : 'complete';
      events.send({ event: 'finished', data: { message: assistant } });
    }
    events.end();
    return null;
  }

  async function handle(cmd, payload) {
    switch (cmd) {
      case 'list_chats':
        return sortedChats();
      case 'create_chat': {
        const chat = { id: state.nextId++, title: '', updatedAt: now() };
        state.chats.push(chat);
        return clone(chat);
      }
      case 'list_messages':
        expectArgs(cmd, payload, { chatId: 'number' });
        findChat(payload.chatId);
        return clone(state.messages.filter((m) => m.chatId === payload.chatId));
      case 'send_message':
        return sendMessage(payload);
      case 'stop_generation': {
        expectArgs(cmd, payload, { chatId: 'number' });
        const gen = state.generating.get(payload.chatId);
        if (gen) gen.stop = true;
        return null;
      }
      case 'active_model':
        return state.model ? clone(state.model) : null;
      default:
        state.contractErrors.push(`unknown command ${cmd}`);
        throw { kind: 'invalidInput', message: `Unknown command ${cmd}` };
    }
  }

  async function invoke(cmd, args = {}) {
    const payload = JSON.parse(JSON.stringify(args ?? {}));
    state.calls.push({ cmd, payload });
    await delay(2);
    const failure = state.failNext[cmd];
    if (failure) {
      delete state.failNext[cmd];
      throw clone(failure);
    }
    return handle(cmd, payload);
  }

  window.__TAURI_INTERNALS__ = {
    invoke,
    transformCallback,
    unregisterCallback,
    runCallback,
    callbacks,
    metadata: { currentWindow: { label: 'main' }, currentWebview: { windowLabel: 'main', label: 'main' } },
  };
}
