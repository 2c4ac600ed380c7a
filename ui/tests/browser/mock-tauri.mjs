/**
 * In-page mock of the Tauri IPC layer, installed with `page.addInitScript(installMockTauri, config)`
 * before the app loads. It defines `window.__TAURI_INTERNALS__` the way @tauri-apps/api/core uses it:
 *   - `invoke(cmd, args)`: args are JSON round-tripped like the real IPC, so a `Channel` arrives as
 *     the string "__CHANNEL__:<callbackId>" (Channel.toJSON);
 *   - `transformCallback(cb, once)` / `unregisterCallback(id)`: the callback registry;
 *   - channel messages are delivered by calling the channel's callback with `{ index, message }`,
 *     and the end of the channel with `{ index, end: true }` (what Rust's Channel drop sends).
 * Behind it sits an in-memory backend: chats whose history is a tree (edit, regenerate, continue,
 * switch branch, delete a subtree) with replies streamed in timed deltas (their stats saying where the
 * cached prompt came from: each chat's KV cache live, put away in RAM, or spilled to disk), chat rename/pin/system
 * prompt/delete, message search, chats changed in the background (`watch_chats`, `__hearthMock.updateChat`), export and
 * import behind stand-ins for the system's file dialogs (`exportDir`, `importFile`; failures via `failNext`), sampling
 * settings per scope with the backend's inheritance, presets, a model whose load settings can
 * be saved and reloaded, and remote providers: their settings and keys (`providers`, `keyStorage`), the
 * models they list (`remoteModels`, failures via `providerFailures`), chats switched to one of their
 * models, which sampling settings reach them, and remote replies with their failures (no key, a refused
 * key "sk-wrong", rate limits and network errors through a reply's `failWith`); and the model manager:
 * Hugging Face repositories (`hubRepos`; a gated one refused without a token, `hubToken`), their files
 * and fit on this machine (`freeRamBytes`, `freeVramBytes`), downloads advancing on timers and reported to
 * `watch_downloads` channels (`downloads` persisted, `downloadTrouble`: a dropped connection, a full disk),
 * the library of GGUF files (`library`), imports (`importPick` for the dialog), loading a model with its
 * progress (`loadFailures`), and the webview's drag-and-drop events (`__hearthMock.emit`).
 * Each chat talks to its own local model, as hearth-app's chat_model.rs has it: a local target names its file
 * (`{ kind: 'local', model: path | null }`; null until the chat's first local reply records the loaded one), a
 * file exists while the library lists it (or it is loaded), `load_chat_model` loads the chat's model when another
 * (or none) is loaded (a chat naming none, while none is loaded, gets the model loaded last: `lastLoaded`),
 * `use_local_model` picks a file for a chat and loads it, and every turn readies the chat's model first, without
 * progress (the loads without progress are counted in `silentLoads`). The idle unload is played by
 * `__hearthMock.unloadIdle()`, which tells the `watch_model` channels (null); its minutes are a budget beside the
 * caches' (`unloadIdleMinutes`). A loaded model's `kvBytes` is its context times `kvBytesPerToken`.
 * Chats whose caches a restart left on disk for the model loaded at start: `cachesOnDisk` (chat ids); each
 * cache takes `cacheFileBytes`, in RAM or on disk (`chat_cache_usage` counts both beside the budgets, and the
 * loaded model's weights and context; `clear_chat_caches` drops every cache); the budgets (`cacheBudgets`, set with `set_chat_cache_budgets`) are in
 * force as the engine has them: caches in RAM beyond its budget move to disk, files beyond its budget go,
 * the least recently used first (so with 0 MB of RAM a chat switched back to is restored from disk).
 * The local OpenAI-compatible server (`get_server`, `set_server`, `set_server_key`): its settings from the
 * contract's defaults, whether a key is saved (never the key), the requests it answered (`serverRequests`,
 * newest first; tests add more to `__hearthMock.server.requests`) and ports other programs hold (`busyPorts`:
 * switched on there, it says why it is not running); the network is refused without a key, and so is removing
 * the key while the network is allowed.
 * Drafts read ahead while the user types (`prefill_draft`) are kept in `prefills` ({ chatId, draft, stillTyping, at }); with
 * `readsAhead` the chat's next reply then says `typed`, as the engine does (off by default: whether a
 * draft is read before Enter depends on the test machine's timing, which no other test should).
 * A reply (`replies`, `defaultReply`) is { text, chunkSize, delayMs, ttftMs, failWith, … }: its text in
 * `chunkSize` pieces, one every `delayMs`; or, with `tokensPerSecond`, offered at that rate (see offerAtRate).
 * Its `drafts` ({ drafted, accepted }) are what speculative decoding guessed ahead and kept: reported in a local
 * reply's stats when the chat's settings have it on, as the engine does (0 otherwise, and for remote replies).
 * While the chat's settings say consensus, a local reply is written as the engine's consensus decoding does: its
 * candidates (a reply's `candidates`, [{ text, score }]; else `mbrCandidates` of them made up around its text)
 * are written out of sight, then the one with the highest score arrives whole, its stats carrying them all
 * (`consensus`: utility, chosen, candidates). Under beam search likewise: the search runs out of sight, then the
 * best reply arrives whole, its stats carrying the best min(nBest, beamWidth) (`beams`: a reply's own `beams`,
 * [{ text, logprob, score, tokens }] best first; else made up around its text, it the best).
 * The token inspector (`token_probs`): each local reply's tokens with made-up distributions, derived from its
 * text (word-sized pieces; `topProbs` likeliest tokens each, the written one among them, p summing to at most 1;
 * the end of the turn last when the model ended the reply), kept as the engine keeps them: for replies the local
 * model wrote by sampling while the chat's `topProbs` was above 0 (none for consensus or beam replies, nor for the
 * mock's providers' replies: it plays no llama.cpp server, whose replies the backend keeps them for too).
 * Saved replies (fixtures) of the loaded model have them derived from their text too, unless `tokenProbs`
 * ({ [messageId]: TokenProbs[] }) says otherwise ([] for a reply written before the inspector existed).
 * `branch_reply` is a turn: a new version of the reply holding the kept tokens' text and the alternative's,
 * written on with the next reply's text, its tokens the kept ones, the alternative, then its own.
 * `compare_replies` answers a reply's question once per settings (2–4, refused in the backend's words), each answer a
 * new version beside the reply written as a reply is under its settings (the next of `replies` each), the events of
 * all columns interleaved and tagged with their column (see compareReplies).
 *
 * What the backend owns comes from `config.contract`, ui/src/ipc/contract.json as the harness reads it
 * (tests/contract.mjs): every command's arguments (checked on each invoke), the error kinds (checked on
 * each error), sampling defaults, ranges (with their wording and whole-number flags), presets and stage
 * order, what "never" means for a logit bias, load defaults and ranges, the context a fit assumes without
 * one in the header, the chats' cache budgets (defaults, ranges and their wording), the server's settings
 * (defaults, the port's range and its wording), the providers on first start, each provider kind's facts
 * (whether it needs a key), and which sampling settings reach each kind of provider.
 *
 * This function is serialized into the page: it must not reference anything outside itself.
 */
export function installMockTauri(config) {
  const clone = (v) => JSON.parse(JSON.stringify(v));
  const contract = config.contract;
  if (!contract) throw new Error('installMockTauri needs config.contract (contract.json; see harness.mjs)');
  const DEFAULT_PROVIDERS = contract.defaultProviders.map((c) => ({ config: clone(c), key: null }));
  const REMOTE_MODELS = {
    openai: [{ id: 'gpt-4o-mini', contextLength: null }, { id: 'gpt-4o', contextLength: null }, { id: 'o3-mini', contextLength: null }],
    anthropic: [{ id: 'claude-3-5-haiku-latest', contextLength: 200000 }, { id: 'claude-sonnet-4-0', contextLength: 200000 }],
  };
  const delay = (ms) => new Promise((r) => setTimeout(r, ms));

  const state = {
    /** The loaded ModelInfo (see loadModel below); config.model names the file. */
    model: null,
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
    /** Each scope's own sampling params, by the backend's storage key ("sampling", "sampling:chat:1"…). */
    sampling: {},
    /** The params of every set_sampling call, accepted or not, and the scope of each. */
    samplingSaves: [],
    samplingScopes: [],
    /** The user's presets. */
    presets: [],
    /** Load settings saved per model path. */
    loadSaved: {},
    /** The params of every set_load_settings call. */
    loadSaves: [],
    /** How long reload_model takes, and the longest context it can allocate (llama.cpp refuses more). */
    reloadMs: config.reloadMs ?? 300,
    maxCtx: config.maxCtx ?? 131072,
    /** The folder export_chats' save dialog picks (the file is named as the backend proposes); null: it is cancelled. */
    exportDir: config.exportDir === undefined ? '/home/me/Documents' : config.exportDir,
    /** The files export_chats wrote: { path, chatIds, format }. */
    exported: [],
    /**
     * The file import_chats' open dialog picks, as the backend reads it: { chats: [{ title, updatedAt, pinned?,
     * systemPrompt?, messages?: [[role, content]] }], skipped: [{ chat, reason }], notes: [] }; null: it is cancelled.
     */
    importFile: clone(config.importFile ?? null),
    /** The providers as the backend keeps them: { config, key: KeyStorage | null }; a fresh install has two. */
    providers: clone(config.providers ?? DEFAULT_PROVIDERS),
    /** The keys themselves, by provider id: never sent back to the window. */
    keys: clone(config.keys ?? {}),
    /** Where set_api_key puts a key: the keychain, or the fallback file when no keychain answers. */
    keyStorage: clone(config.keyStorage ?? { kind: 'keychain' }),
    /** What each provider's models endpoint lists, by provider id. */
    remoteModels: clone(config.remoteModels ?? REMOTE_MODELS),
    /** provider id -> IpcError: listing its models (and testing it) fails with it. */
    providerFailures: clone(config.providerFailures ?? {}),
    /** Replies offered at a fixed rate (`tokensPerSecond`): when each token was sent; see offerAtRate. */
    offered: [],
    /**
     * Each chat's KV cache, as the engine keeps it (what a local reply's stats call `promptSource`), by
     * "<model path>|<context>#<chat id>": `live`, the chat that answered last; `kept`, the others: 'ram'
     * once another chat answered after them, 'disk' once the model was unloaded (or replaced) under them.
     */
    caches: { live: null, kept: new Map(), typed: null },
    /** What one chat's cache takes, in RAM or as a file on disk. */
    cacheFileBytes: config.cacheFileBytes ?? 31_457_280,
    /** What one token of the loaded model's context takes in its KV cache (its `kvBytes`: every cell, allocated at load). */
    kvBytesPerToken: config.kvBytesPerToken ?? 32_768,
    // The engine's compute devices (`compute_devices`).
    devices: config.devices ?? {
      devices: [{ name: 'CPU', description: 'AMD EPYC', backend: 'CPU', kind: 'cpu', freeBytes: 24_000_000_000, totalBytes: 25_000_000_000 }],
      problems: [],
    },
    // Where a loaded model's layers are, as the engine says (`Offload`).
    offload: config.offload ?? { backend: 'CPU', device: 'AMD EPYC', gpuLayers: 0, totalLayers: 30, label: 'On the CPU (AMD EPYC)' },
    /** The budgets for the caches (MB of 2^20 bytes) and the idle minutes, and those of every set_chat_cache_budgets call. */
    cacheBudgets: clone(config.cacheBudgets ?? contract.cacheBudgetDefaults),
    /** Models kept in memory after another was loaded ({ path, sizeBytes }), the least recently used first. */
    keptModels: [],
    budgetSaves: [],
    /** The token inspector's data the engine kept, by reply id (see tokenProbsOf). */
    tokenProbs: new Map(Object.entries(clone(config.tokenProbs ?? {})).map(([id, tokens]) => [Number(id), tokens])),
    /** Every prefill_draft call: { chatId, draft, stillTyping, at } (performance.now()). */
    prefills: [],
    /**
     * The OpenAI-compatible server: its settings, whether a key is saved, the requests it answered (newest
     * first), and the ports other programs hold.
     */
    server: {
      settings: clone(contract.serverDefaults),
      keySet: false,
      requests: clone(config.serverRequests ?? []),
      busyPorts: config.busyPorts ?? [],
    },
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
      state.contractErrors.push(`argument is not a serialized Channel: ${JSON.stringify(arg)}`);
      throw { kind: 'invalidInput', message: 'expected a Channel' };
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

  // --- The commands' arguments, as contract.commands has them: each { name, type } or { name, channel }. ---
  const COMMANDS = new Map(contract.commands.map((c) => [c.name, c.args]));
  /** Tauri's own commands the window calls (the event plugin), not the backend's. */
  const TAURI_COMMANDS = ['plugin:event|listen', 'plugin:event|unlisten'];

  /**
   * Whether `value` is of the TypeScript type `type` as bindings.ts writes it: primitives, `Array<T>`,
   * `T | null`; a named type (SamplingParams, ExportFormat …) only needs to be there: the commands
   * check their shape themselves, as serde would.
   */
  function fits(value, type) {
    const alternatives = type.split(' | ');
    if (alternatives.length > 1) return alternatives.some((t) => fits(value, t));
    if (type === 'null') return value === null;
    if (['number', 'string', 'boolean'].includes(type)) return typeof value === type;
    const item = /^Array<(.+)>$/.exec(type);
    if (item) return Array.isArray(value) && value.every((v) => fits(v, item[1]));
    return value !== undefined && value !== null;
  }

  /** Tauri's argument check against the contract: a wrong or missing argument never reaches the command. */
  function checkArgs(cmd, payload) {
    if (TAURI_COMMANDS.includes(cmd)) return;
    const args = COMMANDS.get(cmd);
    if (!args) {
      state.contractErrors.push(`unknown command ${cmd}`);
      throw `command ${cmd} not found`;
    }
    for (const name of Object.keys(payload)) {
      if (!args.some((a) => a.name === name)) state.contractErrors.push(`${cmd}: unexpected argument ${name}`);
    }
    for (const arg of args) {
      const value = payload[arg.name];
      const ok = arg.channel ? /^__CHANNEL__:\d+$/.test(String(value)) : fits(value, arg.type);
      if (!ok) {
        const expected = arg.channel ? `a Channel<${arg.channel}>` : arg.type;
        state.contractErrors.push(`${cmd}: argument ${arg.name} should be ${expected}, got ${JSON.stringify(value)}`);
        throw `invalid args \`${arg.name}\` for command \`${cmd}\`: expected ${expected}`;
      }
    }
  }

  /** An IpcError the mock answers with must be of a kind the backend has. */
  function checkErrorKind(where, error) {
    if (error && typeof error === 'object' && !contract.errorKinds.includes(error.kind)) {
      state.contractErrors.push(`${where}: error kind ${JSON.stringify(error.kind)} is not one of the backend's`);
    }
  }

  function findChat(chatId) {
    const chat = state.chats.find((c) => c.id === chatId);
    if (!chat) throw { kind: 'notFound', message: `Chat ${chatId} does not exist.` };
    return chat;
  }


  function chunks(text, size) {
    const out = [];
    const chars = [...text];
    for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
    return out;
  }

  // --- Sampling settings: defaults, ranges, presets and stage order from the contract; validation as
  // hearth-core's sampling.rs has it. ---
  const SAMPLER_ORDER = contract.samplerStageOrder;
  const DEFAULT_SAMPLING = contract.samplingDefaults;
  state.defaultSampling = DEFAULT_SAMPLING;
  const RANGES = contract.samplingRanges;
  const NEVER = contract.logitBiasNever;
  const BIAS_MAX = contract.logitBiasMax;
  /** Built-in presets first, as hearth-core's SamplingParams::presets has them. */
  const BUILT_IN_PRESETS = contract.presets;

  /** A FieldError as the backend sends it: the field it concerns beside the message. */
  const refuse = (field, message) => ({ kind: 'invalidInput', message, field });
  const invalid = (field, range, value) => refuse(field, `${field} must be ${range}, got ${value}`);
  const isU32 = (v) => Number.isInteger(v) && v >= 0 && v <= 4_294_967_295;
  /** Serde's check of a whole-number field (a range's `integer`): an i32 where the range goes below 0, else a u32. */
  function wholeProblem({ key, min }, value) {
    if (min < 0 ? Number.isInteger(value) : isU32(value)) return null;
    return `${key} is not ${min < 0 ? 'an i32' : 'a u32'}: ${value}`;
  }

  /** Tauri's own argument check: wrong JSON types never reach the command (a plain string error). */
  function checkSamplingShape(params) {
    const problems = [];
    if (!params || typeof params !== 'object') return ['params is not an object'];
    for (const [key, value] of Object.entries(DEFAULT_SAMPLING)) {
      if (!(key in params)) problems.push(`missing field ${key}`);
      else if (typeof value === 'number' && typeof params[key] !== 'number') problems.push(`${key} is not a number`);
    }
    for (const key of Object.keys(params)) if (!(key in DEFAULT_SAMPLING)) problems.push(`unknown field ${key}`);
    for (const range of RANGES.filter((r) => r.integer)) {
      const problem = wholeProblem(range, params[range.key]);
      if (problem) problems.push(problem);
    }
    if (params.seed !== null && !isU32(params.seed)) problems.push(`seed is not null or a u32: ${params.seed}`);
    if (!['off', 'v1', 'v2'].includes(params.mirostat)) problems.push(`bad mirostat ${params.mirostat}`);
    if (!['off', 'promptLookup', 'draftModel'].includes(params.speculative)) problems.push(`bad speculative ${params.speculative}`);
    if (params.draftModel !== null && typeof params.draftModel !== 'string') problems.push(`draftModel is not null or a string: ${params.draftModel}`);
    if (!['sampling', 'consensus', 'beam'].includes(params.strategy)) problems.push(`bad strategy ${params.strategy}`);
    if (!['chrF', 'exactMatch'].includes(params.mbrUtility)) problems.push(`bad mbrUtility ${params.mbrUtility}`);
    for (const key of ['ignoreEos', 'earlyStopping']) if (typeof params[key] !== 'boolean') problems.push(`${key} is not a boolean`);
    for (const key of ['stop', 'drySequenceBreakers']) {
      if (!Array.isArray(params[key]) || params[key].some((s) => typeof s !== 'string')) problems.push(`${key} is not a list of strings`);
    }
    if (!Array.isArray(params.samplerOrder) || params.samplerOrder.some((s) => !SAMPLER_ORDER.includes(s))) problems.push('bad samplerOrder');
    const c = params.constraint;
    if (c !== null && !(c && ['gbnf', 'jsonSchema'].includes(c.kind) && typeof c.source === 'string' && Object.keys(c).length === 2)) {
      problems.push(`bad constraint ${JSON.stringify(c)}`);
    }
    for (const b of Array.isArray(params.logitBias) ? params.logitBias : [null]) {
      const t = b?.target;
      const ok =
        b && typeof b.bias === 'number' && Object.keys(b).length === 2 && t &&
        ((t.kind === 'token' && isU32(t.id) && Object.keys(t).length === 2) ||
          (t.kind === 'text' && typeof t.text === 'string' && Object.keys(t).length === 2));
      if (!ok) problems.push(`bad logitBias entry ${JSON.stringify(b)}`);
    }
    return problems;
  }

  /** SamplingParams::validate, message for message and in its order: the ranges first. */
  function validateSampling(p) {
    for (const { key, min, max, text } of RANGES) {
      const v = p[key];
      if (!(v >= min && v <= max)) throw invalid(key, text, v);
    }
    const b = p.drySequenceBreakers.find((s) => s === '' || s.includes('\0'));
    if (b !== undefined) throw invalid('drySequenceBreakers', 'non-empty strings without NUL characters', JSON.stringify(b));
    for (const b of p.logitBias) {
      if (!(b.bias >= NEVER && b.bias <= BIAS_MAX)) throw invalid('logitBias.bias', `between ${NEVER} (never) and ${BIAS_MAX}`, b.bias);
      if (b.target.kind === 'text' && b.target.text === '') throw invalid('logitBias.text', 'a non-empty text', '""');
    }
    const empty = p.stop.find((s) => s === '');
    if (empty !== undefined) throw invalid('stop', 'non-empty strings', '""');
    if (p.constraint && (p.constraint.source.trim() === '' || p.constraint.source.includes('\0'))) {
      throw invalid('constraint', 'a non-empty grammar or schema', JSON.stringify(p.constraint.source));
    }
    if (p.speculative === 'draftModel' && p.draftModel === null) throw invalid('draftModel', 'a model file to draft with', 'none');
    if (p.draftModel !== null && (p.draftModel.trim() === '' || p.draftModel.includes('\0'))) {
      throw invalid('draftModel', 'a model file to draft with', JSON.stringify(p.draftModel));
    }
    // Greedy candidates are all the same reply.
    if (p.strategy === 'consensus' && p.temperature === 0) {
      throw invalid('temperature', 'above 0 for consensus decoding (its candidates are sampled)', 0);
    }
    const seen = new Set();
    for (const stage of p.samplerOrder) {
      if (seen.has(stage)) throw invalid('samplerOrder', 'each stage at most once', `${stage} twice`);
      seen.add(stage);
    }
  }

  /** Tauri's argument check of a SettingsScope; the storage key as SettingsScope::key has it. */
  function scopeKey(cmd, scope) {
    const ok =
      scope && typeof scope === 'object' &&
      ((scope.kind === 'global' && Object.keys(scope).length === 1) ||
        (scope.kind === 'model' && typeof scope.path === 'string' && Object.keys(scope).length === 2) ||
        (scope.kind === 'chat' && Number.isInteger(scope.id) && Object.keys(scope).length === 2));
    if (!ok) {
      state.contractErrors.push(`${cmd}: bad scope ${JSON.stringify(scope)}`);
      throw `invalid args \`scope\` for command \`${cmd}\`: ${JSON.stringify(scope)}`;
    }
    return scope.kind === 'global' ? 'sampling' : scope.kind === 'model' ? `sampling:model:${scope.path}` : `sampling:chat:${scope.id}`;
  }

  /** SettingsScope::lookup_order: a chat inherits from the loaded model, everything from global. */
  function lookupOrder(scope) {
    const order = [scope];
    if (scope.kind === 'chat' && state.model) order.push({ kind: 'model', path: state.model.path });
    if (scope.kind !== 'global') order.push({ kind: 'global' });
    return order;
  }

  function checkParams(cmd, params) {
    const problems = checkSamplingShape(params);
    if (problems.length > 0) {
      state.contractErrors.push(...problems.map((p) => `${cmd}: ${p}`));
      throw `invalid args \`params\` for command \`${cmd}\`: ${problems[0]}`;
    }
    validateSampling(params);
  }

  /** The settings at `scope` and the scope they come from (itself, a broader one, or null for the defaults). */
  function getSampling(payload) {
    const scope = payload.scope ?? { kind: 'global' };
    const key = scopeKey('get_sampling', scope);
    const source = lookupOrder(scope).find((s) => state.sampling[scopeKey('get_sampling', s)]) ?? null;
    return {
      current: clone(source ? state.sampling[scopeKey('get_sampling', source)] : DEFAULT_SAMPLING),
      source: clone(source),
      own: key in state.sampling,
      defaults: clone(DEFAULT_SAMPLING),
      ranges: clone(RANGES),
      presets: clone([...BUILT_IN_PRESETS, ...state.presets]),
    };
  }

  function setSampling(payload) {
    const scope = payload.scope ?? { kind: 'global' };
    state.samplingSaves.push(clone(payload.params));
    state.samplingScopes.push(clone(scope));
    const key = scopeKey('set_sampling', scope);
    checkParams('set_sampling', payload.params);
    state.sampling[key] = clone(payload.params);
    return clone(payload.params);
  }

  function savePreset(payload) {
    checkParams('save_preset', payload.params);
    const name = payload.name.trim();
    if (name === '' || BUILT_IN_PRESETS.some((p) => p.name.toLowerCase() === name.toLowerCase())) {
      throw refuse('name', `choose another name: ${JSON.stringify(name)} is empty or a built-in preset`);
    }
    state.presets = [...state.presets.filter((p) => p.name !== name), { name, params: clone(payload.params), builtIn: false }];
    return null;
  }

  // --- Load settings: defaults from the contract; validation and "auto" as hearth-core's load.rs and the engine have them. ---
  const DEFAULT_LOAD = contract.loadDefaults;
  const LOAD_RANGE = Object.fromEntries(contract.loadRanges.map((r) => [r.key, r]));
  const inRange = (key, v) => v >= LOAD_RANGE[key].min && v <= LOAD_RANGE[key].max;
  const PHYSICAL_CORES = 8;
  const optU32 = (v) => v === null || isU32(v);

  /** The model as the engine reports it once loaded with `load` ("auto" resolved). */
  function loadModel(file, load) {
    const nCtxTrain = file.nCtxTrain ?? 8192;
    const nCtx = load.nCtx ?? Math.min(nCtxTrain, contract.autoContextMax);
    return {
      name: file.name, path: file.path, sizeBytes: file.sizeBytes, load: clone(load), fromMemory: false,
      nCtx, nCtxTrain, nThreads: load.nThreads ?? PHYSICAL_CORES,
      nThreadsBatch: load.nThreads ?? PHYSICAL_CORES,
      kvBytes: nCtx * state.kvBytesPerToken,
      offload: clone(state.offload),
      ...(file.notice ? { notice: file.notice } : {}),
    };
  }
  if (config.model) {
    state.loadSaved[config.model.path] = { ...clone(DEFAULT_LOAD), ...clone(config.load ?? {}) };
    state.model = loadModel(config.model, state.loadSaved[config.model.path]);
  }

  function loadSettings() {
    if (!state.model) throw { kind: 'noModel', message: 'no model is loaded' };
    const saved = state.loadSaved[state.model.path] ?? clone(DEFAULT_LOAD);
    return { model: clone(state.model), saved: clone(saved), defaults: clone(DEFAULT_LOAD), needsReload: JSON.stringify(saved) !== JSON.stringify(state.model.load) };
  }

  /** LoadParams' serde check (a plain string error, like Tauri's), then LoadParams::validate and the template compile. */
  function validateLoad(p) {
    const problems = [];
    if (!p || typeof p !== 'object') problems.push('params is not an object');
    else {
      for (const key of Object.keys(p)) if (!(key in DEFAULT_LOAD)) problems.push(`unknown field ${key}`);
      for (const key of ['nCtx', 'nThreads', 'nGpuLayers']) if (!optU32(p[key])) problems.push(`${key} is not null or a u32: ${p[key]}`);
      for (const key of ['nBatch', 'nUbatch']) if (!isU32(p[key])) problems.push(`${key} is not a u32: ${p[key]}`);
      for (const key of ['useMmap', 'useMlock', 'reuseKv']) if (typeof p[key] !== 'boolean') problems.push(`${key} is not a boolean`);
      if (!['auto', 'on', 'off'].includes(p.flashAttention)) problems.push(`bad flashAttention ${p.flashAttention}`);
      if (!['f16', 'q8_0', 'q4_0'].includes(p.kvCacheType)) problems.push(`bad kvCacheType ${p.kvCacheType}`);
      if (p.chatTemplate !== null && typeof p.chatTemplate !== 'string') problems.push('chatTemplate is not null or a string');
    }
    if (problems.length > 0) {
      state.contractErrors.push(...problems.map((x) => `set_load_settings: ${x}`));
      throw `invalid args \`params\` for command \`set_load_settings\`: ${problems[0]}`;
    }
    if (p.kvCacheType !== 'f16' && p.flashAttention === 'off') {
      throw refuse('kvCacheType,flashAttention', 'a quantized KV cache needs flash attention (auto or on)');
    }
    if (!(inRange('nBatch', p.nBatch) && inRange('nUbatch', p.nUbatch))) {
      throw refuse('nBatch,nUbatch', `batch and ubatch sizes must be ${LOAD_RANGE.nBatch.text}`);
    }
    if (p.nUbatch > p.nBatch) throw refuse('nUbatch,nBatch', `ubatch (${p.nUbatch}) must be at most the batch size (${p.nBatch})`);
    if (p.nCtx !== null && !inRange('nCtx', p.nCtx)) throw refuse('nCtx', `context length must be ${LOAD_RANGE.nCtx.text}`);
    if (p.nThreads !== null && !inRange('nThreads', p.nThreads)) throw refuse('nThreads', `threads must be ${LOAD_RANGE.nThreads.text}`);
    if (p.chatTemplate !== null && p.chatTemplate.trim() === '') {
      throw refuse('chatTemplate', "the chat template override is empty: clear it to use the model's own");
    }
    // Not minijinja, but the same verdict for unbalanced delimiters and unclosed for/if blocks.
    const count = (t, re) => (t.match(re) ?? []).length;
    const t = p.chatTemplate;
    if (
      t !== null &&
      (count(t, /\{%/g) !== count(t, /%\}/g) || count(t, /\{\{/g) !== count(t, /\}\}/g) ||
        count(t, /\{%-?\s*for\b/g) !== count(t, /\{%-?\s*endfor\b/g) || count(t, /\{%-?\s*if\b/g) !== count(t, /\{%-?\s*endif\b/g))
    ) {
      throw refuse('chatTemplate', 'the chat template does not compile: syntax error: unexpected end of input, expected end of block (in chat:1)');
    }
  }

  function setLoadSettings(payload) {
    state.loadSaves.push(clone(payload.params));
    validateLoad(payload.params);
    if (!state.model) throw { kind: 'noModel', message: 'no model is loaded' };
    state.loadSaved[state.model.path] = clone(payload.params);
    return loadSettings();
  }

  async function reloadModel() {
    if (!state.model) throw { kind: 'noModel', message: 'no model is loaded' };
    const saved = state.loadSaved[state.model.path];
    await delay(state.reloadMs);
    const next = loadModel(state.model, saved);
    if (next.nCtx > state.maxCtx) {
      throw {
        kind: 'engine',
        message: `llama.cpp could not create a context of ${next.nCtx} tokens (out of memory); the model was loaded again with its previous settings`,
      };
    }
    spillCaches();
    state.model = next;
    return loadSettings();
  }

  for (const [scope, params] of config.ownSampling ?? []) {
    state.sampling[scopeKey('config', scope)] = { ...clone(DEFAULT_SAMPLING), ...clone(params) };
  }
  if (config.sampling) state.sampling.sampling = { ...clone(DEFAULT_SAMPLING), ...clone(config.sampling) };
  state.presets = (config.presets ?? []).map((p) => ({ name: p.name, params: { ...clone(DEFAULT_SAMPLING), ...clone(p.params) }, builtIn: false }));

  let clock = Date.now();
  const now = () => ++clock;

  // --- History as a tree, as hearth-store keeps it: parent links and a current leaf per chat. ---
  /** Message by id (kept in step with state.messages). */
  const byId = new Map();
  {
    // Fixtures without parent links are linear chats; without `leafId` a chat shows its last message.
    const last = new Map();
    for (const m of state.messages) {
      if (!('parentId' in m)) m.parentId = last.get(m.chatId) ?? null;
      delete m.siblings; // derived on the way out
      last.set(m.chatId, m.id);
      byId.set(m.id, m);
    }
    for (const c of state.chats) {
      c.pinned ??= false;
      c.systemPrompt ??= '';
      c.model ??= { kind: 'local', model: null };
      if (!('leafId' in c)) c.leafId = last.get(c.id) ?? null;
    }
    state.nextId = Math.max(state.nextId, ...state.messages.map((m) => m.id + 1), ...state.chats.map((c) => c.id + 1));
  }

  const summary = (chat) =>
    clone({ id: chat.id, title: chat.title, updatedAt: chat.updatedAt, pinned: chat.pinned, systemPrompt: chat.systemPrompt, model: chat.model });
  /** list_chats' order: pinned first, then the most recently updated. */
  const sortedChats = () =>
    [...state.chats].sort((a, b) => Number(b.pinned) - Number(a.pinned) || b.updatedAt - a.updatedAt || b.id - a.id).map(summary);

  const childrenOf = (id) => state.messages.filter((m) => m.parentId === id);

  /** Messages as the backend sends them: with `siblings`, the ids of each one's parent's children, oldest first. */
  function withSiblings(messages) {
    const children = new Map();
    for (const m of state.messages) {
      const key = `${m.chatId}:${m.parentId}`;
      if (!children.has(key)) children.set(key, []);
      children.get(key).push(m.id);
    }
    for (const ids of children.values()) ids.sort((a, b) => a - b);
    return messages.map((m) => ({ ...clone(m), siblings: children.get(`${m.chatId}:${m.parentId}`) }));
  }
  const decorate = (m) => withSiblings([m])[0];

  /** The chat's first message down to `id`. */
  function pathTo(id) {
    const path = [];
    for (let m = byId.get(id); m; m = m.parentId === null ? undefined : byId.get(m.parentId)) path.push(m);
    return path.reverse();
  }
  const shownPath = (chat) => (chat.leafId === null ? [] : withSiblings(pathTo(chat.leafId)));

  /** Follows the newest child down from `id`. */
  function newestLeaf(id) {
    for (;;) {
      const kids = childrenOf(id);
      if (kids.length === 0) return id;
      id = Math.max(...kids.map((k) => k.id));
    }
  }

  function messageOf(chat, id, role) {
    const m = byId.get(id);
    if (!m || m.chatId !== chat.id) throw { kind: 'notFound', message: `Message ${id} does not exist.` };
    if (role && m.role !== role) throw { kind: 'invalidInput', message: `message ${id} is not a ${role} message of this chat` };
    return m;
  }

  /** Adds a message under `parentId` and shows its branch; the first user message titles the chat. */
  function append(chat, parentId, fields) {
    const m = { id: state.nextId++, chatId: chat.id, parentId, status: 'complete', createdAt: now(), model: null, stats: null, ...fields };
    state.messages.push(m);
    byId.set(m.id, m);
    chat.leafId = m.id;
    chat.updatedAt = now();
    if (!chat.title && m.role === 'user') chat.title = m.content.split('\n')[0].slice(0, 48);
    return m;
  }

  function switchBranch(payload) {
    const chat = findChat(payload.chatId);
    messageOf(chat, payload.messageId);
    chat.leafId = newestLeaf(payload.messageId);
    return shownPath(chat);
  }

  /** Deletes the message's subtree; a path through it moves to the newest remaining sibling's branch, else ends at the parent. */
  function deleteMessage(payload) {
    const chat = findChat(payload.chatId);
    const message = messageOf(chat, payload.messageId);
    const onPath = chat.leafId !== null && pathTo(chat.leafId).some((m) => m.id === message.id);
    const siblings = decorate(message).siblings;
    const doomed = new Set([message.id]);
    for (let grew = true; grew; ) {
      const before = doomed.size;
      for (const m of state.messages) if (doomed.has(m.parentId)) doomed.add(m.id);
      grew = doomed.size > before;
    }
    state.messages = state.messages.filter((m) => !doomed.has(m.id));
    for (const id of doomed) byId.delete(id);
    if (onPath) {
      const sibling = [...siblings].reverse().find((id) => id !== message.id);
      chat.leafId = sibling === undefined ? message.parentId : newestLeaf(sibling);
    }
    return shownPath(chat);
  }

  function deleteChat(payload) {
    findChat(payload.chatId);
    const gen = state.generating.get(payload.chatId);
    if (gen) gen.stop = true;
    state.chats = state.chats.filter((c) => c.id !== payload.chatId);
    state.messages = state.messages.filter((m) => m.chatId !== payload.chatId);
    forgetCache(payload.chatId);
    return null;
  }

  /** rename_chat, pin_chat, set_system_prompt: one field of the chat, answered with its summary. */
  function updateChat(payload, field, value = (v) => v) {
    const chat = findChat(payload.chatId);
    const key = { title: 'title', pinned: 'pinned', prompt: 'systemPrompt' }[field];
    chat[key] = value(payload[field]);
    return summary(chat);
  }

  // --- Search: case-insensitive substrings of the query's words, all of them; snippets as parts. ---
  const SNIPPET_BEFORE = 40;
  const SNIPPET_AFTER = 120;

  function snippet(text, words) {
    const lower = text.toLowerCase();
    const first = Math.min(...words.map((w) => lower.indexOf(w)));
    const start = Math.max(0, first - SNIPPET_BEFORE);
    const end = Math.min(text.length, first + SNIPPET_AFTER);
    const hit = new Array(end - start).fill(false);
    for (const w of words) {
      for (let at = lower.indexOf(w, start); at >= 0 && at < end; at = lower.indexOf(w, at + 1)) {
        for (let i = at; i < Math.min(at + w.length, end); i++) hit[i - start] = true;
      }
    }
    const parts = [];
    for (let i = 0; i < hit.length; i++) {
      const ch = text[start + i];
      if (parts.length > 0 && parts.at(-1).hit === hit[i]) parts.at(-1).text += ch;
      else parts.push({ text: ch, hit: hit[i] });
    }
    if (start > 0) parts.unshift({ text: '…', hit: false });
    if (end < text.length) parts.push({ text: '…', hit: false });
    return parts;
  }

  function searchMessages(payload) {
    const words = (payload.query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
    const hits = [];
    if (words.length === 0) return hits;
    for (const m of [...state.messages].reverse()) {
      if (hits.length === 50) break;
      const lower = m.content.toLowerCase();
      if (m.status === 'streaming' || !words.every((w) => lower.includes(w))) continue;
      const chat = findChat(m.chatId);
      hits.push({ chatId: m.chatId, chatTitle: chat.title, messageId: m.id, role: m.role, snippet: snippet(m.content, words), createdAt: m.createdAt });
    }
    return hits;
  }

  // --- Export and import: the backend opens the file dialogs; the test says what the user picks. ---
  /** The file name the backend proposes for a chat (transfer.rs' file_stem). */
  function fileStem(title) {
    const stem = title.replace(/[^\p{L}\p{N}-]/gu, ' ').split(/\s+/).filter(Boolean).join(' ');
    return stem ? [...stem].slice(0, 60).join('') : 'chat';
  }

  function exportChats(payload) {
    const { chatIds, format } = payload;
    if (!(chatIds === null || chatIds.every(Number.isInteger)) || !['json', 'markdown'].includes(format)) {
      state.contractErrors.push(`export_chats: bad arguments ${JSON.stringify(payload)}`);
      throw `invalid args for command \`export_chats\`: ${JSON.stringify(payload)}`;
    }
    const chats = (chatIds ?? []).map(findChat);
    if (state.exportDir === null) return null;
    const name = chats.length === 1 ? fileStem(chats[0].title) : 'hearth-chats';
    const path = `${state.exportDir}/${name}.${format === 'json' ? 'json' : 'md'}`;
    state.exported.push({ path, chatIds: clone(chatIds), format });
    return path;
  }

  /** Adds the file's chats with new ids and their own dates, each a linear history. */
  function importChats() {
    const file = state.importFile;
    if (file === null) return null;
    const imported = (file.chats ?? []).map((c) => {
      const chat = {
        id: state.nextId++, title: c.title, updatedAt: c.updatedAt, pinned: c.pinned ?? false, systemPrompt: c.systemPrompt ?? '', leafId: null,
        model: { kind: 'local', model: null },
      };
      state.chats.push(chat);
      let parentId = null;
      for (const [role, content] of c.messages ?? []) {
        const m = { id: state.nextId++, chatId: chat.id, parentId, role, content, status: 'complete', createdAt: c.updatedAt, model: null, stats: null };
        state.messages.push(m);
        byId.set(m.id, m);
        chat.leafId = parentId = m.id;
      }
      return summary(chat);
    });
    return { imported, skipped: clone(file.skipped ?? []), notes: clone(file.notes ?? []) };
  }

  // --- Chats changed in the background (watch_chats channels), and a test's way to cause it. ---
  const watchers = [];
  /** Stands in for the backend changing a chat on its own (an automatic title): change it, tell the watchers. */
  state.updateChat = (chatId, patch) => {
    const chat = findChat(chatId);
    Object.assign(chat, patch);
    for (const watcher of watchers) watcher.send(summary(chat));
  };

  // --- Providers, as hearth-providers and src-tauri/ipc/providers.rs have them. ---
  const KINDS = Object.keys(contract.providerKinds);
  const ID_MAX = contract.providerIdMaxLength;
  const PROVIDER_ID = new RegExp(`^[A-Za-z0-9_-]{1,${ID_MAX}}$`);
  /** A key the provider refuses (401). */
  const REFUSED_KEY = 'sk-wrong';

  // Keys given by the test are where set_api_key would have put them.
  for (const p of state.providers) if (state.keys[p.config.id]) p.key ??= clone(state.keyStorage);

  function providerOf(id) {
    const found = state.providers.find((p) => p.config.id === id);
    if (!found) throw { kind: 'provider', message: `no provider ${JSON.stringify(id)} is configured; pick another model for this chat` };
    return found;
  }

  /** The key a request would carry: ProviderError::NoKey where the kind needs one, Unauthorized for a refused one. */
  function keyFor({ config: c }) {
    const key = state.keys[c.id];
    if (!key && contract.providerKinds[c.kind].needsKey) {
      throw { kind: 'providerAuth', message: `${c.name} needs an API key: add it in Settings → Providers` };
    }
    if (key === REFUSED_KEY) {
      throw {
        kind: 'providerAuth',
        message: `${c.name} refused the API key (401): Incorrect API key provided: sk-wr**ng. Check the key in Settings → Providers`,
      };
    }
    return key ?? null;
  }

  function listModels(payload) {
    const p = providerOf(payload.provider);
    const failure = state.providerFailures[p.config.id];
    if (failure) throw clone(failure);
    keyFor(p);
    const listed = clone(state.remoteModels[p.config.id] ?? []);
    for (const typed of p.config.models) if (!listed.some((m) => m.id === typed)) listed.push({ id: typed, contextLength: null });
    return listed;
  }

  /** Tauri's argument check of a ProviderConfig (a plain string error), then ProviderConfig::validate. */
  function checkProviderConfig(c) {
    const ok =
      c && typeof c.id === 'string' && typeof c.name === 'string' && KINDS.includes(c.kind) && typeof c.baseUrl === 'string' &&
      Array.isArray(c.models) && c.models.every((m) => typeof m === 'string') && (c.contextLength === null || isU32(c.contextLength)) &&
      typeof c.extensions === 'boolean' && (c.tokenizerRepo === null || typeof c.tokenizerRepo === 'string') && typeof c.allowPlainHttp === 'boolean' &&
      Object.keys(c).length === 9;
    if (!ok) {
      state.contractErrors.push(`save_provider: bad config ${JSON.stringify(c)}`);
      throw `invalid args \`config\` for command \`save_provider\`: ${JSON.stringify(c)}`;
    }
    if (!PROVIDER_ID.test(c.id)) throw refuse('id', `a provider id is 1–${ID_MAX} letters, digits, '-' or '_'`);
    if (c.name.trim() === '') throw refuse('name', 'give the provider a name');
    const url = c.baseUrl.trim();
    if (!/^https?:\/\//.test(url) || url.length < 10) throw refuse('baseUrl', `the base URL ${JSON.stringify(url)} must start with http:// or https://`);
    const host = url.match(/^https?:\/\/([^/]+)/)?.[1] ?? '';
    const thisMachine = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/i.test(host);
    if (/^http:\/\//i.test(url) && !thisMachine && !c.allowPlainHttp) {
      throw refuse('allowPlainHttp', 'http:// to another machine sends your key and chats unencrypted: use https://, or turn on plain HTTP for this provider');
    }
    if (c.contextLength === 0) throw refuse('contextLength', 'a context length must be above 0');
  }

  /** scheme://host:port of a base URL, as ProviderConfig::same_destination compares them. */
  function destination(url) {
    try {
      const u = new URL(url.trim());
      return `${u.protocol}//${u.hostname}:${u.port || (u.protocol === 'https:' ? 443 : 80)}`;
    } catch {
      return null;
    }
  }

  function saveProvider(payload) {
    checkProviderConfig(payload.config);
    const existing = state.providers.find((p) => p.config.id === payload.config.id);
    if (existing && destination(existing.config.baseUrl) !== destination(payload.config.baseUrl)) {
      // App::save_provider: a key given for one host is not sent to another.
      delete state.keys[existing.config.id];
      existing.key = null;
    }
    if (existing) existing.config = clone(payload.config);
    else state.providers.push({ config: clone(payload.config), key: null });
    return clone(providerOf(payload.config.id));
  }

  function setApiKey(payload) {
    const p = providerOf(payload.provider);
    const key = payload.key.trim();
    if (key === '') {
      delete state.keys[p.config.id];
      p.key = null;
    } else {
      state.keys[p.config.id] = key;
      p.key = clone(state.keyStorage);
    }
    return clone(p.key);
  }

  function deleteProvider(payload) {
    state.providers = state.providers.filter((p) => p.config.id !== payload.provider);
    delete state.keys[payload.provider];
    return null;
  }

  /** Tauri's argument check of a ModelTarget. */
  function checkTarget(cmd, t) {
    const ok =
      t && ((t.kind === 'local' && (t.model === null || typeof t.model === 'string') && Object.keys(t).length === 2) ||
        (t.kind === 'remote' && typeof t.provider === 'string' && typeof t.model === 'string' && Object.keys(t).length === 3));
    if (!ok) {
      state.contractErrors.push(`${cmd}: bad target ${JSON.stringify(t)}`);
      throw `invalid args \`target\` for command \`${cmd}\`: ${JSON.stringify(t)}`;
    }
  }

  function setChatModel(payload) {
    checkTarget('set_chat_model', payload.target);
    const chat = findChat(payload.chatId);
    if (payload.target.kind === 'remote') {
      providerOf(payload.target.provider);
      if (payload.target.model.trim() === '') throw { kind: 'invalidInput', message: 'pick a model of the provider' };
    }
    if (payload.target.kind === 'local' && payload.target.model !== null && !fileExists(payload.target.model)) {
      throw { kind: 'invalidInput', message: `there is no model file at ${payload.target.model}` };
    }
    chat.model = clone(payload.target);
    return summary(chat);
  }

  /** hearth-core's sampling_support: the contract's table for the target's kind, with the provider's name in its notes. */
  function samplingSupport(payload) {
    checkTarget('sampling_support_for', payload.target);
    if (payload.target.kind === 'local') return clone(contract.samplingSupport.local);
    const { name, kind, extensions } = providerOf(payload.target.provider).config;
    const table = contract.providerKinds[kind].takesExtensions && extensions ? `${kind}Extensions` : kind;
    return contract.samplingSupport[table].map((s) => ({ ...s, note: s.note.replaceAll(contract.providerNamePlaceholder, name) }));
  }

  /**
   * Providers::start_reply for a chat's remote target: the provider and its key are looked up before
   * the reply starts (failing then, nothing is saved); the display name is "<model> (<provider name>)".
   * A refused key only shows once the request is made: `refused` is the error the reply fails with.
   */
  function startRemote(target) {
    const p = providerOf(target.provider);
    let refused = null;
    try {
      keyFor(p);
    } catch (error) {
      if (state.keys[p.config.id] !== REFUSED_KEY) throw error;
      refused = error;
    }
    return { model: `${target.model} (${p.config.name})`, refused };
  }

  // --- Each chat's KV cache (state.caches): where a local reply's cached prompt came from. A file on disk
  // is valid for one model and context, so a cache is kept under both. ---
  const cacheKey = (chatId) => `${state.model.path}|${state.model.nCtx}#${chatId}`;

  /** The engine taking a chat's cache for its reply: where it came from ('new' when nowhere). */
  function takeCache(chatId) {
    const { caches } = state;
    const key = cacheKey(chatId);
    const live = caches.live === key;
    const source = live ? (caches.typed === key ? 'typed' : 'live') : (caches.kept.get(key) ?? 'new');
    makeLive(key);
    caches.typed = null;
    return source;
  }

  /** `key`'s cache becomes the engine's live one; the chat that had it before is put away in RAM (within its budget). */
  function makeLive(key) {
    const { caches } = state;
    if (caches.live !== null && caches.live !== key) caches.kept.set(caches.live, 'ram');
    caches.kept.delete(key);
    caches.live = key;
    keepWithinBudgets();
  }

  /**
   * prefill_draft, as the engine has it: a local chat's conversation and the draft up to its last word are
   * read into the chat's cache (made the live one), unless a reply is under way or nothing of the draft is
   * settled yet (one word); the chat's next reply then says `typed`. Remote chats ignore it.
   */
  function prefillDraft(payload) {
    const chat = findChat(payload.chatId);
    state.prefills.push({ chatId: chat.id, draft: payload.draft, stillTyping: payload.stillTyping, at: performance.now() });
    if (!config.readsAhead || chat.model.kind === 'remote' || !state.model || state.generating.size > 0) return null;
    if (!/\s/.test(payload.draft.trimEnd())) return null;
    const key = cacheKey(chat.id);
    makeLive(key);
    state.caches.typed = key;
    return null;
  }

  /** The kept caches in `where` ('ram' or 'disk'), least recently used first (kept's order: put away last, last). */
  const keptIn = (where) => [...state.caches.kept].filter(([, w]) => w === where).map(([key]) => key);

  /**
   * chat_cache_usage: the cache files on disk (one per chat and model), those in RAM, the budgets, and the
   * loaded model's weights (its file) and context (its KV cache); 0 for both when none is loaded.
   */
  function cacheUsage() {
    const files = keptIn('disk').length;
    const ramBytes = keptIn('ram').length * state.cacheFileBytes;
    const modelBytes = state.model?.sizeBytes ?? 0;
    const contextBytes = state.model?.kvBytes ?? 0;
    const keptModelBytes = keptBytes();
    return { bytes: files * state.cacheFileBytes, chats: files, ramBytes, budgets: clone(state.cacheBudgets), modelBytes, contextBytes, keptModelBytes };
  }

  const keptBytes = () => state.keptModels.reduce((sum, m) => sum + m.sizeBytes, 0);
  /** Drops the least recently used kept models until they fit the budget for other models. */
  const fitKeptModels = () => {
    while (keptBytes() > state.cacheBudgets.modelsRamMb * 2 ** 20) state.keptModels.shift();
  };
  /** The engine's kept models (hearth-engine's kept.rs): the model left stays while the budget for other models allows, the oldest going first. */
  function keepModel(model) {
    if (model.sizeBytes > state.cacheBudgets.modelsRamMb * 2 ** 20) return;
    state.keptModels.push({ path: model.path, sizeBytes: model.sizeBytes });
    fitKeptModels();
  }

  /** The budgets in force, least recently used first: caches in RAM beyond its budget spill to disk, files beyond its budget go. */
  function keepWithinBudgets() {
    const { caches, cacheBudgets, cacheFileBytes } = state;
    const over = (where, mb) => keptIn(where).length * cacheFileBytes > mb * 2 ** 20;
    while (over('ram', cacheBudgets.ramMb)) caches.kept.set(keptIn('ram')[0], 'disk');
    while (over('disk', cacheBudgets.diskMb)) caches.kept.delete(keptIn('disk')[0]);
    fitKeptModels();
  }

  /** CacheBudgets' serde check (a plain string error, like Tauri's), then CacheBudgets::validate, in its order. */
  const BUDGET_WORDS = {
    ramMb: 'the memory for chat caches',
    diskMb: 'the disk space for chat caches',
    unloadIdleMinutes: 'the idle time before the model is unloaded',
    modelsRamMb: 'the memory for other models',
  };
  function setCacheBudgets(payload) {
    const b = payload.budgets;
    state.budgetSaves.push(clone(b));
    const problems = [];
    if (!b || typeof b !== 'object') problems.push('budgets is not an object');
    else {
      for (const key of Object.keys(b)) if (!(key in contract.cacheBudgetDefaults)) problems.push(`unknown field ${key}`);
      for (const key of Object.keys(contract.cacheBudgetDefaults)) if (!isU32(b[key])) problems.push(`${key} is not a u32: ${b[key]}`);
    }
    if (problems.length > 0) {
      state.contractErrors.push(...problems.map((x) => `set_chat_cache_budgets: ${x}`));
      throw `invalid args \`budgets\` for command \`set_chat_cache_budgets\`: ${problems[0]}`;
    }
    for (const { key, min, max, text } of contract.cacheBudgetRanges) {
      if (!(b[key] >= min && b[key] <= max)) throw refuse(key, `${BUDGET_WORDS[key]} must be ${text}`);
    }
    state.cacheBudgets = clone(b);
    keepWithinBudgets();
    return cacheUsage();
  }

  /** clear_chat_caches: every chat's cache goes, in RAM and on disk (the budgets stay); their next replies read the prompt anew. */
  function clearCaches() {
    state.caches = { live: null, kept: new Map(), typed: null };
    return cacheUsage();
  }

  /** The model unloaded (or replaced): every chat's cache spills to a file. */
  function spillCaches() {
    const { caches } = state;
    if (caches.live !== null) caches.kept.set(caches.live, 'disk');
    caches.live = null;
    caches.typed = null;
    for (const key of caches.kept.keys()) caches.kept.set(key, 'disk');
    keepWithinBudgets();
  }

  /** A deleted chat's cache goes with it. */
  function forgetCache(chatId) {
    const { caches } = state;
    const mine = (key) => key.endsWith(`#${chatId}`);
    if (caches.live !== null && mine(caches.live)) caches.live = null;
    if (caches.typed !== null && mine(caches.typed)) caches.typed = null;
    for (const key of [...caches.kept.keys()]) if (mine(key)) caches.kept.delete(key);
  }

  // --- The OpenAI-compatible server, as hearth-app's App::set_server and set_server_key have it. ---

  /** get_server: where it listens when it is on and its port is free; why not when it is not. */
  function serverStatus() {
    const { settings, keySet, requests, busyPorts } = state.server;
    const busy = settings.enabled && busyPorts.includes(settings.port);
    return {
      settings: clone(settings),
      // Where programs on this machine reach it, whether or not the network may too.
      url: settings.enabled && !busy ? `http://127.0.0.1:${settings.port}/v1` : null,
      problem: busy ? `port ${settings.port} is in use by another program: choose another port` : null,
      keySet,
      requests: clone(requests),
    };
  }

  /** ServerSettings' serde check (a plain string error, like Tauri's; the port a u16), then validate, then the key. */
  const SERVER_WORDS = { port: 'the port' };
  function setServer(payload) {
    const s = payload.settings;
    const problems = [];
    if (!s || typeof s !== 'object') problems.push('settings is not an object');
    else {
      for (const key of Object.keys(s)) if (!(key in contract.serverDefaults)) problems.push(`unknown field ${key}`);
      for (const [key, value] of Object.entries(contract.serverDefaults)) {
        if (typeof s[key] !== typeof value) problems.push(`${key} is not a ${typeof value}: ${s[key]}`);
      }
      if (!(Number.isInteger(s.port) && s.port >= 0 && s.port <= 65_535)) problems.push(`port is not a u16: ${s.port}`);
    }
    if (problems.length > 0) {
      state.contractErrors.push(...problems.map((x) => `set_server: ${x}`));
      throw `invalid args \`settings\` for command \`set_server\`: ${problems[0]}`;
    }
    for (const { key, min, max, text } of contract.serverRanges) {
      if (!(s[key] >= min && s[key] <= max)) throw refuse(key, `${SERVER_WORDS[key]} must be ${text}`);
    }
    if (s.network && !state.server.keySet) throw refuse('network', 'set an API key first: programs on other machines must send it');
    // hearth_server::normalize_origin: kept as browsers send them, each once.
    const origins = [];
    for (const typed of s.allowedOrigins) {
      const t = typed.trim();
      const m = /^(https?):\/\/([^/?#@\s]+)\/?$/i.exec(t);
      if (t !== '*' && !m) {
        throw refuse('allowedOrigins', `${JSON.stringify(t)} is not a web origin: write it as https://example.org (a scheme and a host, with a port if any, no path), or * for any`);
      }
      const kept = t === '*' ? t : `${m[1]}://${m[2]}`.toLowerCase();
      if (!origins.includes(kept)) origins.push(kept);
    }
    state.server.settings = { ...clone(s), allowedOrigins: origins };
    return serverStatus();
  }

  /** set_server_key: a key (never sent back) or null to remove it. */
  function setServerKey({ key }) {
    if (key === null) {
      if (state.server.settings.network) throw refuse('key', 'the server is open to the network: turn that off before removing its key');
      state.server.keySet = false;
    } else if (key.trim() === '') {
      throw refuse('key', 'the key is empty');
    } else {
      state.server.keySet = true;
    }
    return serverStatus();
  }

  // The chats (ids) whose caches the model loaded at start finds on disk, spilled before a restart.
  if (state.model) for (const id of config.cachesOnDisk ?? []) state.caches.kept.set(cacheKey(id), 'disk');
  keepWithinBudgets();

  // --- Turns: send, edit, regenerate and continue share one streaming path. ---
  const TURNS = {
    send_message: {
      plan: (chat, p) => ({ user: { parentId: chat.leafId, content: p.content } }),
    },
    edit_message: {
      plan: (chat, p) => ({ user: { parentId: messageOf(chat, p.messageId, 'user').parentId, content: p.content } }),
    },
    regenerate_reply: {
      plan: (chat, p) => ({ replyParent: messageOf(chat, p.messageId, 'assistant').parentId }),
    },
    continue_reply: {
      plan: (chat, p) => {
        const partial = messageOf(chat, p.messageId, 'assistant');
        if (partial.status === 'streaming') throw { kind: 'invalidInput', message: 'this reply is still being written' };
        return { continued: partial, tokens: tokenProbsOf(partial) };
      },
    },
    // ChatService's Turn::Branch (branch_at), refusals word for word.
    branch_reply: {
      plan: (chat, p) => {
        const original = messageOf(chat, p.messageId, 'assistant');
        const tokens = tokenProbsOf(original);
        const position = tokens[p.at];
        if (!position) throw { kind: 'invalidInput', message: 'this reply has no token probabilities kept at that position' };
        const alternative = position.top.find((t) => t.id === p.token);
        if (!alternative) throw { kind: 'invalidInput', message: 'that token was not among the alternatives at this position' };
        const kept = tokens.slice(0, p.at).map((t) => t.text).join('');
        if (!original.content.startsWith(kept)) throw { kind: 'invalidInput', message: "the reply's text no longer matches its tokens" };
        const chosen = { ...clone(position), id: alternative.id, text: alternative.text, p: alternative.p };
        return { branch: { parentId: original.parentId, text: kept + alternative.text, model: original.model }, tokens: [...clone(tokens.slice(0, p.at)), chosen] };
      },
    },
  };

  // --- The token inspector: made-up distributions for a reply's text, as the engine would keep them. ---
  const ALTERNATIVE_WORDS = ['the', 'a', 'this', 'and', 'so', 'it', 'then', 'all', 'one', 'just'];
  const round3 = (x) => Math.round(x * 1000) / 1000;
  const bits = (ps) => round3(-ps.filter((q) => q > 0).reduce((sum, q) => sum + q * Math.log2(q), 0));

  /**
   * `text` as the engine's tokens (word-sized pieces, line breaks apart), each with `topN` likeliest tokens: the
   * written one first (p 0.42–0.96), then made-up words after the same whitespace, each half the share of the
   * one before (so p sums to at most 1); `ended`: the end of the turn follows. `from` offsets the positions
   * (tokens appended to earlier ones).
   */
  function madeUpTokens(text, topN, ended, from = 0) {
    const pieces = text.match(/\n|[^\S\n]*\S+|[^\S\n]+/g) ?? [];
    const tokens = pieces.map((piece, n) => {
      const i = from + n;
      const id = 1000 + i * 16;
      const p = round3(0.42 + ((i * 37) % 55) / 100);
      const lead = /^\s*/.exec(piece)[0];
      const words = ALTERNATIVE_WORDS.filter((w) => w !== piece.trim());
      const alternatives = Array.from({ length: Math.max(0, topN - 1) }, (_, k) => ({
        id: id + k + 1, text: `${lead}${words[(i + k) % words.length]}`, p: round3((1 - p) / 2 ** (k + 1)),
      }));
      const top = topN > 0 ? [{ id, text: piece, p }, ...alternatives] : [];
      const rest = 1 - p - alternatives.reduce((sum, a) => sum + a.p, 0);
      return { id, text: piece, p, entropy: bits([p, ...alternatives.map((a) => a.p), rest]), top };
    });
    if (ended) {
      const top = [{ id: 2, text: '', p: 0.93 }, { id: 198, text: '\n', p: 0.05 }, { id: 13, text: '.', p: 0.01 }].slice(0, topN);
      tokens.push({ id: 2, text: '', p: 0.93, entropy: bits([0.93, 0.05, 0.01, 0.01]), top });
    }
    return tokens;
  }

  /**
   * What token_probs answers for reply `m`: what the engine kept for it, or, for a saved reply (fixture) of the
   * loaded model, tokens made up from its text (`topProbs` at its default); nothing for anything else.
   */
  function tokenProbsOf(m) {
    if (state.tokenProbs.has(m.id)) return state.tokenProbs.get(m.id);
    if (m.role !== 'assistant' || !state.model || m.model !== state.model.name || m.stats?.consensus || m.stats?.beams) return [];
    return madeUpTokens(m.content, DEFAULT_SAMPLING.topProbs, m.status === 'complete' && !m.stats?.cutAtLimit);
  }

  /**
   * A reply offered at a fixed rate (the streaming bench, ui/bench/stream.mjs): a reply with
   * `tokensPerSecond` sends its text's `chunkSize` pieces (tokens) on a timer every `tickMs`
   * (default 4), each tick every token due by then at that rate, one delta message per token (Hearth's
   * engine coalesces tokens every 40 ms: one message each is the harder case for the window). A late
   * timer (a busy main thread) sends the tokens it owes in its tick, as an IPC queue would deliver
   * them. When each token was sent (performance.now()) is kept in `state.offered`: one
   * { tokensPerSecond, sentAt: [] } per such reply.
   */
  async function offerAtRate(pieces, reply, gen, deliver) {
    const log = { tokensPerSecond: reply.tokensPerSecond, sentAt: [] };
    state.offered.push(log);
    const start = performance.now();
    let sent = 0;
    while (sent < pieces.length && !gen.stop) {
      await delay(reply.tickMs ?? 4);
      const due = Math.min(pieces.length, Math.floor(((performance.now() - start) / 1000) * reply.tokensPerSecond) + 1);
      for (; sent < due && !gen.stop; sent++) {
        deliver(pieces[sent]);
        log.sentAt.push(performance.now());
      }
    }
  }

  /**
   * A consensus reply's candidates, as the engine keeps them: the reply's own `candidates` when it has them,
   * else the settings' `mbrCandidates` made up around `text` (it among them, scored highest); the chosen one is the first
   * with the highest score, as Consensus::choose picks it.
   */
  function consensusFor(reply, text, sampling) {
    const words = text.split(' ');
    const made = Array.from({ length: sampling.mbrCandidates }, (_, i) => {
      if (i === 1) return { text, score: 0.81 };
      const cut = Math.max(1, words.length - 1 - (i % 3));
      return { text: `${words.slice(0, cut).join(' ')}${i % 2 ? '…' : ' — in short.'}`, score: Math.round((0.72 - 0.04 * i) * 100) / 100 };
    });
    const candidates = clone(reply.candidates ?? made);
    const chosen = candidates.reduce((best, c, i) => (c.score > candidates[best].score ? i : best), 0);
    return { utility: sampling.mbrUtility, chosen, candidates };
  }

  /**
   * A beam search's best replies, best first, as the engine keeps them: the reply's own `beams`, else
   * min(nBest, beamWidth) made up around `text`, each scored logprob ÷ tokens^lengthPenalty (at the default
   * penalty, `text` is the best).
   */
  function beamsFor(reply, text, sampling) {
    const words = text.split(' ');
    const length = Math.max(1, (text.match(/\S+/g) ?? []).length);
    const made = Array.from({ length: Math.min(sampling.nBest, sampling.beamWidth) }, (_, i) => {
      const cut = Math.max(1, words.length - i);
      const tokens = Math.max(1, length - i + (i % 2) * 2);
      const logprob = round3(-(2.4 + 1.9 * i) * (tokens / length));
      return { text: i === 0 ? text : `${words.slice(0, cut).join(' ')}${i % 2 ? '…' : '.'}`, logprob, tokens };
    });
    const beams = clone(reply.beams ?? made.map((b) => ({ ...b, score: round3(b.logprob / b.tokens ** sampling.lengthPenalty) })));
    return reply.beams ? beams : beams.sort((a, b) => b.score - a.score);
  }

  async function runTurn(cmd, payload) {
    const turn = TURNS[cmd];
    const events = channel(payload.onEvent);
    const chat = findChat(payload.chatId);
    if ('content' in payload && payload.content.trim() === '') throw { kind: 'invalidInput', message: 'the message is empty' };
    const remote = chat.model.kind === 'remote' ? chat.model : null;
    if (state.generating.size > 0) throw { kind: 'busy', message: 'A reply is already being generated.' };
    await prepareChatModel(chat);
    if (!remote && !state.model) throw { kind: 'noModel', message: 'No model is loaded.' };
    const plan = turn.plan(chat, payload);
    // Remote providers keep no cache of ours: their prompts always come as new.
    const promptSource = remote ? 'new' : takeCache(chat.id);
    const reply = state.replies.shift() ?? state.defaultReply;
    const gen = { stop: false };
    state.generating.set(chat.id, gen);

    const user = plan.user && append(chat, plan.user.parentId, { role: 'user', content: plan.user.content });
    await delay(5);
    if (user) events.send({ event: 'userSaved', data: { message: decorate(user) } });

    let model = state.model?.name;
    let { text, failWith } = reply;
    if (remote) {
      try {
        const started = startRemote(remote);
        model = started.model;
        // A refused key fails the request before any text.
        if (started.refused) [text, failWith] = ['', started.refused];
      } catch (error) {
        // The backend could not start the reply: nothing was saved for it.
        state.generating.delete(chat.id);
        checkErrorKind(cmd, error);
        events.send({ event: 'failed', data: { error, message: null } });
        events.end();
        return null;
      }
    }
    const assistant =
      plan.continued ??
      (plan.branch
        ? append(chat, plan.branch.parentId, { role: 'assistant', content: plan.branch.text, status: 'stopped', model: plan.branch.model })
        : append(chat, user ? user.id : plan.replyParent, { role: 'assistant', content: '', status: 'streaming', model }));
    const sampling = getSampling({ scope: { kind: 'chat', id: chat.id } }).current;
    await writeReply({
      cmd, chat, assistant, model, reply, text, failWith, sampling, remote, gen, promptSource, planTokens: plan.tokens,
      send: (event) => events.send(event),
      beforeEnd: () => state.generating.delete(chat.id),
    });
    events.end();
    return null;
  }

  /**
   * Writes `reply` (its `text`, or its failure `failWith`) into the saved `assistant` message as the engine does
   * under `sampling` (its strategy, speculative decoding, topProbs): replyStarted after its ttft, its deltas (a
   * consensus or a beam search's whole at the end), its stats, the token inspector's data, then finished or
   * failed through `send`; `beforeEnd` runs just before that last event. Stops where `gen.stop` says.
   */
  async function writeReply({ cmd, chat, assistant, model, reply, text, failWith, sampling, remote, gen, promptSource, planTokens, send, beforeEnd }) {
    const opening = assistant.content;
    assistant.status = 'streaming';
    assistant.model = model;

    await delay(reply.ttftMs ?? 40);
    send({ event: 'replyStarted', data: { messageId: assistant.id, model } });
    const started = performance.now();
    let tokens = 0;
    // Consensus runs on the local engine only: its candidates are written out of sight, then the chosen one arrives whole.
    const consensus = !remote && !failWith && sampling.strategy === 'consensus' ? consensusFor(reply, text, sampling) : null;
    if (consensus) text = consensus.candidates[consensus.chosen].text;
    // So does beam search: the search runs out of sight, then its best reply arrives whole.
    const beams = !remote && !failWith && sampling.strategy === 'beam' ? beamsFor(reply, text, sampling) : null;
    if (beams) text = beams[0].text;
    const pieces = chunks(text, reply.chunkSize ?? 4);
    const deliver = (piece) => {
      assistant.content += piece;
      tokens += 1;
      send({ event: 'delta', data: { text: piece } });
    };
    if (consensus || beams) {
      for (const _ of pieces) {
        await delay(reply.delayMs ?? 20);
        if (gen.stop) break;
      }
      if (!gen.stop) {
        assistant.content += text;
        tokens = pieces.length;
        send({ event: 'delta', data: { text } });
      }
    } else if (reply.tokensPerSecond) {
      await offerAtRate(pieces, reply, gen, deliver);
    } else {
      for (const piece of pieces) {
        await delay(reply.delayMs ?? 20);
        if (gen.stop) break;
        deliver(piece);
      }
    }
    const seconds = Math.max((performance.now() - started) / 1000, 0.001);
    // Speculative decoding runs on the local engine only, when the chat's settings turn it on.
    const speculating = !remote && sampling.speculative !== 'off';
    const drafts = speculating ? (reply.drafts ?? { drafted: 0, accepted: 0 }) : { drafted: 0, accepted: 0 };
    assistant.stats = {
      promptTokens: 24, cachedTokens: { new: 0, typed: 21 }[promptSource] ?? 8, completionTokens: tokens, ttftMs: reply.ttftMs ?? 40,
      decodeTps: tokens / seconds, droppedMessages: reply.droppedMessages ?? 0, cutAtLimit: !gen.stop && (reply.cutAtLimit ?? false),
      promptSource, draftedTokens: drafts.drafted, acceptedTokens: drafts.accepted,
      ...(reply.templateNotice ? { templateNotice: reply.templateNotice } : {}),
      ...(consensus && !gen.stop ? { consensus } : {}),
      ...(beams && !gen.stop ? { beams } : {}),
    };
    // The token inspector's data, kept as the engine keeps it: a local reply written by sampling while the
    // chat's topProbs is above 0 (a continued or branched one's after the tokens it already had).
    const ended = !gen.stop && !failWith && !(reply.cutAtLimit ?? false);
    if (!remote && !consensus && !beams && sampling.topProbs > 0) {
      const before = planTokens ?? [];
      state.tokenProbs.set(assistant.id, [...before, ...madeUpTokens(assistant.content.slice(opening.length), sampling.topProbs, ended, before.length)]);
    } else if (planTokens?.length) {
      state.tokenProbs.set(assistant.id, planTokens);
    } else {
      state.tokenProbs.set(assistant.id, []);
    }
    chat.updatedAt = now();
    beforeEnd();
    if (failWith && !gen.stop) {
      assistant.status = 'failed';
      assistant.stats = null;
      checkErrorKind(cmd, failWith);
      send({ event: 'failed', data: { error: failWith, message: decorate(assistant) } });
    } else {
      assistant.status = gen.stop ? 'stopped' : 'complete';
      send({ event: 'finished', data: { message: decorate(assistant) } });
    }
  }

  /** compare_replies answers with 2 to this many settings (hearth-core's MAX_COMPARED). */
  const MAX_COMPARED = 4;

  /**
   * ChatService::compare (compare_replies): the question of reply `messageId` answered once per settings in
   * `variants`, side by side. Refused before anything starts, in the backend's words and order: each variant's
   * shape (Tauri's check), 2 to 4 of them, each validated as set_sampling validates ("settings N: …"), a turn
   * already running, a message that is not a reply of the chat. Then every answer is saved as a new version
   * beside the reply, in column order (so the last is on show), and all are written at once: each as a reply
   * (writeReply) under its own settings, with the next of `replies` (else `defaultReply`), its events tagged with
   * its column and interleaved with the others', each ending with its own finished or failed; one that cannot
   * start (no model, a provider that refuses) fails alone, nothing saved for it. Stop stops them all.
   */
  async function compareReplies(payload) {
    const cmd = 'compare_replies';
    const events = channel(payload.onEvent);
    const { variants } = payload;
    const shape = variants.flatMap((v, i) => checkSamplingShape(v).map((p) => `variants[${i}]: ${p}`));
    if (shape.length > 0) {
      state.contractErrors.push(...shape.map((p) => `${cmd}: ${p}`));
      throw `invalid args \`variants\` for command \`${cmd}\`: ${shape[0]}`;
    }
    if (variants.length < 2 || variants.length > MAX_COMPARED) {
      throw { kind: 'invalidInput', message: `compare 2 to ${MAX_COMPARED} settings, not ${variants.length}` };
    }
    variants.forEach((sampling, i) => {
      try {
        validateSampling(sampling);
      } catch (e) {
        throw { kind: 'invalidInput', message: `settings ${i + 1}: ${e.message}` };
      }
    });
    const chat = findChat(payload.chatId);
    if (state.generating.size > 0) throw { kind: 'busy', message: 'this chat is already generating a reply; wait for it or press Stop' };
    await prepareChatModel(chat);
    const original = messageOf(chat, payload.messageId, 'assistant');
    const remote = chat.model.kind === 'remote' ? chat.model : null;
    const gen = { stop: false };
    state.generating.set(chat.id, gen);
    // Started in column order; the first keeps the chat's cache, the others share its opening.
    const columns = variants.map((sampling, column) => {
      const reply = state.replies.shift() ?? state.defaultReply;
      let model = state.model?.name;
      let { text, failWith } = reply;
      try {
        if (!remote && !state.model) throw { kind: 'noModel', message: 'No model is loaded.' };
        if (remote) {
          const started = startRemote(remote);
          model = started.model;
          if (started.refused) [text, failWith] = ['', started.refused];
        }
      } catch (error) {
        return { column, cannotStart: error };
      }
      const promptSource = remote ? 'new' : column === 0 ? takeCache(chat.id) : 'new';
      const assistant = append(chat, original.parentId, { role: 'assistant', content: '', status: 'streaming', model });
      return { column, sampling, reply, model, text, failWith, assistant, promptSource };
    });
    await delay(5);
    await Promise.all(
      columns.map((c) => {
        const send = (event) => events.send({ column: c.column, event });
        if (c.cannotStart) {
          checkErrorKind(cmd, c.cannotStart);
          send({ event: 'failed', data: { error: c.cannotStart, message: null } });
          return null;
        }
        const { assistant, model, reply, text, failWith, sampling, promptSource } = c;
        return writeReply({ cmd, chat, assistant, model, reply, text, failWith, sampling, remote, gen, promptSource, planTokens: [], send, beforeEnd: () => {} });
      }),
    );
    state.generating.delete(chat.id);
    events.end();
    return null;
  }

  // --- The model manager, as src-tauri's ipc/hub commands have it: Hugging Face search, files and fit,
  // downloads reported over `watch_downloads` channels (timers stand in for the network), the library
  // of GGUF files, imports, and loading a model with its progress. ---
  const GB = 1e9;
  const HOUR = 3_600_000;
  const DAY = 24 * HOUR;
  const isoAgo = (ms) => new Date(Date.now() - ms).toISOString();
  const HF_CACHE = '/home/me/.cache/huggingface/hub';
  const MODELS_DIR = '/home/me/.local/share/hearth/models';
  const facts = (architecture, parameters, quantization, contextLength, layers, hasChatTemplate = true) =>
    ({ architecture, parameters, quantization, contextLength, layers, hasChatTemplate });
  const GATED_MESSAGE =
    'meta-llama/Llama-3.2-1B-Instruct-GGUF is gated: accept its license on huggingface.co, then add your Hugging Face token in Models → Discover';
  const DISK_FULL = 'the download stopped: the disk is full (needs 1.1 GB more on /home). Free some space, then resume';

  const HUB_REPOS = [
    { id: 'HuggingFaceTB/SmolLM2-135M-Instruct-GGUF', downloads: 48211, likes: 37, updatedAt: isoAgo(3 * DAY + HOUR), gated: false },
    { id: 'bartowski/SmolLM2-1.7B-Instruct-GGUF', downloads: 12890, likes: 21, updatedAt: isoAgo(40 * DAY), gated: false },
    { id: 'Qwen/Qwen2.5-7B-Instruct-GGUF', downloads: 301544, likes: 412, updatedAt: isoAgo(9 * DAY), gated: false },
    { id: 'meta-llama/Llama-3.2-1B-Instruct-GGUF', downloads: 88012, likes: 164, updatedAt: isoAgo(5 * HOUR), gated: true },
    { id: 'unsloth/Llama-3.3-70B-Instruct-GGUF', downloads: 1_204_410, likes: 98, updatedAt: isoAgo(2 * DAY), gated: false },
  ];
  /**
   * Per repository: its GGUF header's facts (the quantization is each file's own), the KV cache's bytes
   * per token (layers × K and V × KV heads × head size × 2 bytes), the compute buffer, and its files as
   * the hub lists them (not in order: the window sorts them).
   */
  const split = (stem, n) => Array.from({ length: n }, (_, i) => `${stem}-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.gguf`);
  const HUB_MODELS = {
    'HuggingFaceTB/SmolLM2-135M-Instruct-GGUF': {
      facts: facts('llama', 134_515_008, null, 8192, 30), kvPerToken: 30 * 2 * 3 * 64 * 2, computeBytes: 0.04 * GB,
      quants: [
        { quant: 'Q8_0', files: ['smollm2-135m-instruct-q8_0.gguf'], sizeBytes: 144_811_296 },
        { quant: 'F16', files: split('smollm2-135m-instruct-f16', 2), sizeBytes: 270_897_952 },
        { quant: 'Q4_1', files: ['smollm2-135m-instruct-q4_1.gguf'], sizeBytes: 98_402_592 },
      ],
    },
    'bartowski/SmolLM2-1.7B-Instruct-GGUF': {
      facts: facts('llama', 1_711_376_384, null, 8192, 24), kvPerToken: 24 * 2 * 32 * 64 * 2, computeBytes: 0.15 * GB,
      quants: [
        { quant: 'Q8_0', files: ['SmolLM2-1.7B-Instruct-Q8_0.gguf'], sizeBytes: 1_820_414_944 },
        { quant: 'Q4_K_M', files: ['SmolLM2-1.7B-Instruct-Q4_K_M.gguf'], sizeBytes: 1_055_609_824 },
      ],
    },
    'Qwen/Qwen2.5-7B-Instruct-GGUF': {
      facts: facts('qwen2', 7_615_616_512, null, 32768, 28), kvPerToken: 28 * 2 * 4 * 128 * 2, computeBytes: 0.3 * GB,
      quants: [
        { quant: 'Q4_K_M', files: split('qwen2.5-7b-instruct-q4_k_m', 2), sizeBytes: 4_683_073_184 },
        { quant: 'Q8_0', files: split('qwen2.5-7b-instruct-q8_0', 3), sizeBytes: 8_098_525_888 },
        { quant: 'Q2_K', files: ['qwen2.5-7b-instruct-q2_k.gguf'], sizeBytes: 3_015_940_800 },
      ],
    },
    'meta-llama/Llama-3.2-1B-Instruct-GGUF': {
      facts: facts('llama', 1_235_814_432, null, 131072, 16), kvPerToken: 16 * 2 * 8 * 64 * 2, computeBytes: 0.12 * GB,
      quants: [
        { quant: 'Q4_K_M', files: ['Llama-3.2-1B-Instruct-Q4_K_M.gguf'], sizeBytes: 807_694_464 },
        { quant: 'Q8_0', files: ['Llama-3.2-1B-Instruct-Q8_0.gguf'], sizeBytes: 1_321_083_008 },
      ],
    },
    'unsloth/Llama-3.3-70B-Instruct-GGUF': {
      facts: facts('llama', 70_553_706_496, null, 131072, 80), kvPerToken: 80 * 2 * 8 * 128 * 2, computeBytes: 1.1 * GB,
      quants: [
        { quant: 'Q4_K_M', files: split('Llama-3.3-70B-Instruct-Q4_K_M', 2), sizeBytes: 42_520_395_584 },
        { quant: 'F16', files: split('Llama-3.3-70B-Instruct-F16', 3), sizeBytes: 141_107_412_992 },
      ],
    },
  };
  state.hubRepos = clone(config.hubRepos ?? HUB_REPOS);
  /** The Hugging Face token the backend keeps, and where it keeps it. */
  state.hubToken = config.hubToken ?? null;
  state.hubTokenStorage = clone(config.hubTokenStorage ?? { kind: 'keychain' });
  /** What hub_fit measures this machine at. */
  state.freeRamBytes = config.freeRamBytes ?? 12.4 * GB;
  state.freeVramBytes = config.freeVramBytes === undefined ? 6 * GB : config.freeVramBytes;
  state.hubDelayMs = config.hubDelayMs ?? 60;

  function hubModel(repo) {
    const model = HUB_MODELS[repo];
    const listed = state.hubRepos.some((r) => r.id === repo);
    if (!model || !listed) throw { kind: 'notFound', message: `no repository ${repo} on Hugging Face` };
    if (state.hubRepos.find((r) => r.id === repo).gated && !state.hubToken) throw { kind: 'hubAuth', message: GATED_MESSAGE };
    return model;
  }

  function hubSearch(payload) {
    const words = payload.query.toLowerCase().split(/\s+/).filter((w) => w && w !== 'gguf');
    return clone(state.hubRepos.filter((r) => words.every((w) => r.id.toLowerCase().includes(w))));
  }

  function hubRepoFiles(payload) {
    return clone(hubModel(payload.repo).quants);
  }

  /** hearth-hub's fit: weights + KV cache at the context + compute, against free VRAM (all layers) or VRAM and RAM (some). */
  function hubFit(payload) {
    const ctx = payload.contextLength;
    if (!(ctx === null || (Number.isInteger(ctx) && ctx > 0))) {
      state.contractErrors.push(`hub_fit: contextLength should be null or a u32, got ${JSON.stringify(ctx)}`);
      throw `invalid args \`contextLength\` for command \`hub_fit\`: ${JSON.stringify(ctx)}`;
    }
    const model = hubModel(payload.repo);
    const quant = model.quants.find((q) => q.files[0] === payload.file);
    if (!quant) throw { kind: 'notFound', message: `${payload.repo} has no file ${payload.file}, or it is not a quantization's first part` };
    const contextLength = ctx ?? model.facts.contextLength ?? contract.fitContextFallback;
    const weightsBytes = quant.sizeBytes;
    const kvCacheBytes = model.kvPerToken * contextLength;
    const computeBytes = model.computeBytes;
    const totalBytes = weightsBytes + kvCacheBytes + computeBytes;
    const ram = state.freeRamBytes;
    const vram = state.freeVramBytes;
    const layers = model.facts.layers;
    let verdict;
    if (totalBytes <= (vram ?? ram)) verdict = { kind: 'fits' };
    else if (vram !== null && totalBytes <= vram + ram) {
      verdict = { kind: 'gpuLayers', layers: Math.max(1, Math.floor((layers * vram) / totalBytes)), totalLayers: layers };
    } else verdict = { kind: 'tooLarge' };
    return {
      facts: { ...clone(model.facts), quantization: quant.quant }, contextLength, weightsBytes, kvCacheBytes, computeBytes, totalBytes,
      freeRamBytes: ram, freeVramBytes: vram, verdict,
    };
  }

  const tokenStatus = () => ({ stored: state.hubToken !== null, storage: state.hubToken !== null ? clone(state.hubTokenStorage) : null });

  function setHubToken(payload) {
    const token = payload.token;
    const trimmed = token?.trim() ?? '';
    if (trimmed === '') {
      state.hubToken = null;
      return tokenStatus();
    }
    if (trimmed === 'hf_wrong') {
      throw { kind: 'hubAuth', message: 'Hugging Face refused the token (401 Unauthorized): check it at huggingface.co → Settings → Access Tokens' };
    }
    state.hubToken = trimmed;
    return tokenStatus();
  }

  // Downloads: each advances by a step per tick; `bytesPerSecond` is what a real link would report.
  const downloadWatchers = [];
  const downloadTimers = new Map();
  state.downloads = clone(config.downloads ?? []);
  state.downloadTickMs = config.downloadTickMs ?? 90;
  state.downloadSteps = config.downloadSteps ?? 24;
  state.downloadSpeed = config.downloadSpeed ?? 23.4e6;
  state.retryWaitS = config.retryWaitS ?? 2;
  /** "repo:quant" → what goes wrong with it: a dropped connection (retried), or a disk that fills up. */
  state.downloadTrouble = clone(
    config.downloadTrouble ?? {
      'HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:F16': { dropAt: 0.4 },
      'bartowski/SmolLM2-1.7B-Instruct-GGUF:Q8_0': { diskFullAt: 0.5 },
    },
  );
  let nextDownload = 1;

  function findDownload(payload) {
    const d = state.downloads.find((x) => x.id === payload.id);
    if (!d) throw { kind: 'notFound', message: `no download ${payload.id}` };
    return d;
  }

  function publish(d) {
    for (const w of downloadWatchers) w.send(d);
  }

  function snapshotPath(d) {
    const [owner, name] = d.repo.split('/');
    return `${HF_CACHE}/models--${owner}--${name}/snapshots/5b9e1a4c0f3e2d7c8a6b4e1f9d2c3a7b8e6f0d1c/${d.files[0]}`;
  }

  function stopTimer(d) {
    clearTimeout(downloadTimers.get(d.id));
    downloadTimers.delete(d.id);
  }

  function after(d, ms, step) {
    stopTimer(d);
    downloadTimers.set(d.id, setTimeout(() => {
      downloadTimers.delete(d.id);
      step();
    }, ms));
  }

  /** One tick of a running download: more bytes, or trouble, or the checksum and the library. */
  function advance(d) {
    const trouble = state.downloadTrouble[`${d.repo}:${d.quant}`] ?? {};
    const next = Math.min(d.totalBytes, d.doneBytes + Math.ceil(d.totalBytes / state.downloadSteps));
    const crossed = (at) => at !== undefined && d.doneBytes < at * d.totalBytes && next >= at * d.totalBytes;
    if (crossed(trouble.dropAt) && !trouble.dropped) {
      trouble.dropped = true;
      Object.assign(d, { state: 'retrying', bytesPerSecond: 0, etaSeconds: null, attempt: d.attempt + 1, retryInS: state.retryWaitS });
      publish(d);
      after(d, state.retryWaitS * 1000, () => {
        Object.assign(d, { state: 'running', retryInS: null });
        publish(d);
        after(d, state.downloadTickMs, () => advance(d));
      });
      return;
    }
    if (crossed(trouble.diskFullAt) && !trouble.failed) {
      trouble.failed = true;
      Object.assign(d, { state: 'failed', doneBytes: Math.floor(trouble.diskFullAt * d.totalBytes), bytesPerSecond: 0, etaSeconds: null, error: DISK_FULL });
      publish(d);
      return;
    }
    d.doneBytes = next;
    if (next < d.totalBytes) {
      Object.assign(d, { state: 'running', bytesPerSecond: state.downloadSpeed, etaSeconds: (d.totalBytes - next) / state.downloadSpeed });
      publish(d);
      after(d, state.downloadTickMs, () => advance(d));
      return;
    }
    Object.assign(d, { state: 'verifying', bytesPerSecond: 0, etaSeconds: null });
    publish(d);
    after(d, 3 * state.downloadTickMs, () => {
      d.state = 'done';
      d.modelPath = snapshotPath(d);
      const facts = { ...clone(HUB_MODELS[d.repo]?.facts ?? {}), quantization: d.quant };
      if (!state.library.some((m) => m.path === d.modelPath)) {
        state.library.push({
          path: d.modelPath, name: d.files[0].replace(/(-0000\d-of-0000\d)?\.gguf$/, ''), source: 'hubCache', repo: d.repo,
          sizeBytes: d.totalBytes, facts, error: null,
        });
      }
      publish(d);
    });
  }

  function startDownload(payload) {
    const quant = hubModel(payload.repo).quants.find((q) => q.quant === payload.quant);
    if (!quant || JSON.stringify(quant.files) !== JSON.stringify(payload.files)) {
      throw { kind: 'notFound', message: `${payload.repo} has no quantization ${payload.quant} with those files` };
    }
    if (quant.sizeBytes > 20 * GB) {
      throw {
        kind: 'diskFull',
        message: `not enough disk space for ${payload.repo} ${payload.quant}: it needs ${(quant.sizeBytes / GB).toFixed(1)} GB and /home has 20.3 GB free`,
      };
    }
    const d = {
      id: `dl-${nextDownload++}`, repo: payload.repo, quant: payload.quant, files: clone(payload.files), state: 'queued', doneBytes: 0,
      totalBytes: quant.sizeBytes, bytesPerSecond: 0, etaSeconds: null, attempt: 1, maxAttempts: 8, retryInS: null, error: null, modelPath: null,
    };
    state.downloads.push(d);
    after(d, 2 * state.downloadTickMs, () => advance(d));
    return clone(d);
  }

  function pauseDownload(payload) {
    const d = findDownload(payload);
    if (!['queued', 'running', 'retrying'].includes(d.state)) throw { kind: 'invalidInput', message: `this download is ${d.state}: there is nothing to pause` };
    stopTimer(d);
    Object.assign(d, { state: 'paused', bytesPerSecond: 0, etaSeconds: null, retryInS: null });
    publish(d);
    return clone(d);
  }

  function resumeDownload(payload) {
    const d = findDownload(payload);
    if (!['paused', 'failed'].includes(d.state)) throw { kind: 'invalidInput', message: `this download is ${d.state}: there is nothing to resume` };
    Object.assign(d, { state: 'queued', error: null, attempt: d.state === 'failed' ? 1 : d.attempt });
    publish(d);
    after(d, state.downloadTickMs, () => advance(d));
    return clone(d);
  }

  function cancelDownload(payload) {
    const d = findDownload(payload);
    if (['done', 'cancelled'].includes(d.state)) throw { kind: 'invalidInput', message: `this download is ${d.state}` };
    stopTimer(d);
    Object.assign(d, { state: 'cancelled', doneBytes: 0, bytesPerSecond: 0, etaSeconds: null, retryInS: null });
    setTimeout(() => publish(d), 20);
    return null;
  }

  // The library: the loaded model is the one whose path is state.model's.
  const DEFAULT_LIBRARY = [
    {
      path: config.model?.path ?? '/home/me/models/Llama-3.2-3B-Instruct-Q4_K_M.gguf', name: config.model?.name ?? 'Llama-3.2-3B-Instruct-Q4_K_M',
      source: 'linked', repo: null, sizeBytes: config.model?.sizeBytes ?? 2_019_377_696, facts: facts('llama', 3_212_749_824, 'Q4_K_M', 131072, 28), error: null,
    },
    {
      path: `${HF_CACHE}/models--Qwen--Qwen2.5-0.5B-Instruct-GGUF/snapshots/9217f5db79a29953eb74d5343926648285ec7e67/qwen2.5-0.5b-instruct-q8_0.gguf`,
      name: 'qwen2.5-0.5b-instruct-q8_0', source: 'hubCache', repo: 'Qwen/Qwen2.5-0.5B-Instruct-GGUF', sizeBytes: 675_710_816,
      facts: facts('qwen2', 494_032_768, 'Q8_0', 32768, 24), error: null,
    },
    {
      path: `${MODELS_DIR}/Phi-3.5-mini-instruct-Q4_K_M.gguf`, name: 'Phi-3.5-mini-instruct-Q4_K_M', source: 'modelsFolder', repo: null,
      sizeBytes: 2_393_232_608, facts: facts('phi3', 3_821_079_552, 'Q4_K_M', 131072, 32), error: null,
    },
    {
      path: `${MODELS_DIR}/TinyStories-33M-F16.gguf`, name: 'TinyStories-33M-F16', source: 'copied', repo: null, sizeBytes: 137_854_112,
      facts: facts('gpt2', 68_530_000, 'F16', 2048, 4, false), error: null,
    },
    {
      path: `${MODELS_DIR}/broken.gguf`, name: 'broken', source: 'modelsFolder', repo: null, sizeBytes: 4096, facts: null,
      error: 'broken.gguf is truncated: it ends at byte 4096 but its header needs at least byte 70231; download it again',
    },
  ];
  state.library = clone(config.library ?? DEFAULT_LIBRARY);
  /** path → IpcError: loading that file fails with it (after some progress); the loaded model stays. */
  state.loadFailures = clone(config.loadFailures ?? {});
  state.loadStepMs = config.loadStepMs ?? 70;
  /** The file import_model_dialog's open dialog picks; null: it is cancelled. */
  state.importPick = config.importPick === undefined ? '/home/me/Downloads/gemma-2-2b-it-Q4_K_M.gguf' : config.importPick;
  state.revealed = [];

  const libraryEntry = (m) => ({ ...clone(m), loaded: state.model?.path === m.path });

  function libraryModel(payload) {
    const m = state.library.find((x) => x.path === payload.path);
    if (!m) throw { kind: 'notFound', message: `${payload.path} is not in the library` };
    return m;
  }

  /** The model the backend loaded last (its active model): what a chat naming none gets while none is loaded. */
  state.lastLoaded = state.model?.path ?? null;
  /** The loads a turn made without progress (the window did not load the chat's model first). */
  state.silentLoads = [];

  /** A file is there while the library lists it, or while it is loaded. */
  const fileExists = (path) => state.library.some((m) => m.path === path) || state.model?.path === path;

  /** load_model's work: `m` loaded in place of the model, reporting to `progress` (null: to no one), or why not. */
  async function loadFile(m, progress) {
    if (state.generating.size > 0) throw { kind: 'busy', message: 'a reply is being generated: stop it or wait, then load the model' };
    if (m.error) throw { kind: 'file', message: m.error };
    const failure = state.loadFailures[m.path];
    state.loadCancelled = false;
    const kept = state.keptModels.findIndex((k) => k.path === m.path);
    const fromMemory = kept >= 0 && !failure;
    for (const fraction of fromMemory ? [1] : [0, 0.15, 0.35, 0.55, 0.75, 0.9, 1]) {
      if (failure && fraction > 0.5) {
        progress?.end();
        throw clone(failure);
      }
      if (state.loadCancelled) {
        // As the app answers: the load given up, the model before it loaded again.
        progress?.end();
        const again = state.model ? `; ${state.model.name} is loaded again` : '';
        throw { kind: 'engine', message: `loading ${m.path} was cancelled${again}` };
      }
      progress?.send(fraction);
      await delay(state.loadStepMs);
    }
    progress?.end();
    state.loadSaved[m.path] ??= clone(DEFAULT_LOAD);
    spillCaches();
    if (fromMemory) state.keptModels.splice(kept, 1);
    if (state.model && state.model.path !== m.path) keepModel(state.model);
    state.model = { ...loadModel({ name: m.name, path: m.path, sizeBytes: m.sizeBytes, nCtxTrain: m.facts?.contextLength ?? 4096 }, state.loadSaved[m.path]), fromMemory };
    state.lastLoaded = m.path;
    return clone(state.model);
  }

  function loadModelCmd(payload) {
    const progress = channel(payload.onProgress);
    return loadFile(libraryModel(payload), progress);
  }

  /**
   * App::ready_chat_model: the chat's model loaded when another (or none) is; null when nothing needed
   * loading (a remote chat, its model loaded, a chat naming none while one is loaded). A chat whose file
   * is gone gets words, and the loaded model stays.
   */
  async function readyChatModel(chat, progress) {
    if (chat.model.kind !== 'local') return null;
    let wanted = chat.model.model;
    if (wanted !== null && !fileExists(wanted)) {
      const name = wanted.split('/').at(-1).replace(/\.[^.]+$/, '');
      throw { kind: 'file', message: `this chat talks to ${name}, whose file is gone (${wanted}); pick another model for it with the model button` };
    }
    if (wanted === null) {
      if (state.model) return null;
      if (state.lastLoaded === null || !fileExists(state.lastLoaded)) return null; // the reply then says no model is loaded
      wanted = state.lastLoaded;
    }
    if (state.model?.path === wanted) return null;
    return loadFile(libraryModel({ path: wanted }), progress);
  }

  /** App::prepare_chat_model, before every turn: the chat's model readied without progress; a chat naming none records the loaded one. */
  async function prepareChatModel(chat) {
    if (await readyChatModel(chat, null)) state.silentLoads.push(state.model.path);
    if (chat.model.kind === 'local' && chat.model.model === null && state.model) chat.model = { kind: 'local', model: state.model.path };
  }

  function loadChatModel(payload) {
    const progress = channel(payload.onProgress);
    return readyChatModel(findChat(payload.chatId), progress);
  }

  /** App::use_local_model: `path` becomes the chat's model, loaded unless it is. */
  async function useLocalModel(payload) {
    const progress = channel(payload.onProgress);
    const chat = findChat(payload.chatId);
    if (!fileExists(payload.path)) throw { kind: 'file', message: `there is no model file at ${payload.path}` };
    chat.model = { kind: 'local', model: payload.path };
    const loaded = await readyChatModel(chat, progress);
    return { chat: summary(chat), loaded };
  }

  /** Windows told of the loaded model's changes they did not ask for (watch_model channels). */
  const modelWatchers = [];
  /**
   * The engine's idle timer ran out (unloadIdleMinutes): the model leaves memory, its chats' caches go to
   * disk, and the windows are told (null), as AppState::unload_idle_model does.
   */
  state.unloadIdle = () => {
    spillCaches();
    state.model = null;
    state.keptModels = [];
    for (const watcher of modelWatchers) watcher.send(null);
  };

  function importModel(cmd, path, mode) {
    if (!['copy', 'link'].includes(mode)) {
      state.contractErrors.push(`${cmd}: mode should be "copy" or "link", got ${JSON.stringify(mode)}`);
      throw `invalid args \`mode\` for command \`${cmd}\``;
    }
    const file = path.split('/').at(-1);
    if (!/\.gguf$/i.test(file) || file.includes('not-a-model')) {
      throw { kind: 'invalidInput', message: `${file} is not a GGUF file: it starts with "PK\\u0003\\u0004" where a GGUF file starts with "GGUF"` };
    }
    const target = mode === 'copy' ? `${MODELS_DIR}/${file}` : path;
    const existing = state.library.find((m) => m.path === target);
    if (existing) return libraryEntry(existing);
    const quant = /(I?Q\d\w*|F16|BF16|F32)\.gguf$/i.exec(file)?.[1]?.toUpperCase() ?? null;
    const m = {
      path: target, name: file.replace(/\.gguf$/i, ''), source: mode === 'copy' ? 'copied' : 'linked', repo: null, sizeBytes: 1_708_582_752,
      facts: facts('gemma2', 2_614_341_888, quant, 8192, 26), error: null,
    };
    state.library.push(m);
    return libraryEntry(m);
  }

  // Events (plugin:event|listen): only the webview's drag-and-drop events are sent, through `state.emit`.
  const eventListeners = [];
  let nextEventId = 1;
  state.emit = (event, payload) => {
    for (const l of eventListeners.filter((x) => x.event === event)) runCallback(l.handler, { event, id: l.id, payload });
  };
  window.__TAURI_EVENT_PLUGIN_INTERNALS__ = { unregisterListener: () => {} };

  async function handleModels(cmd, payload) {
    switch (cmd) {
      case 'hub_search':
        await delay(state.hubDelayMs);
        return hubSearch(payload);
      case 'hub_repo_files':
        await delay(state.hubDelayMs);
        return hubRepoFiles(payload);
      case 'hub_fit':
        await delay(state.hubDelayMs);
        return hubFit(payload);
      case 'hub_token_status':
        return tokenStatus();
      case 'set_hub_token':
        return setHubToken(payload);
      case 'start_download':
        return startDownload(payload);
      case 'list_downloads':
        return clone(state.downloads);
      case 'watch_downloads':
        downloadWatchers.push(channel(payload.onUpdate));
        return null;
      case 'pause_download':
        return pauseDownload(payload);
      case 'resume_download':
        return resumeDownload(payload);
      case 'cancel_download':
        return cancelDownload(payload);
      case 'list_library':
        return state.library.map(libraryEntry);
      case 'import_model':
        return importModel(cmd, payload.path, payload.mode);
      case 'import_model_dialog':
        if (state.importPick === null) {
          if (!['copy', 'link'].includes(payload.mode)) state.contractErrors.push(`${cmd}: bad mode ${JSON.stringify(payload.mode)}`);
          return null;
        }
        return importModel(cmd, state.importPick, payload.mode);
      case 'delete_model': {
        const m = libraryModel(payload);
        if (state.model?.path === m.path) {
          spillCaches();
          state.model = null;
        }
        state.library = state.library.filter((x) => x !== m);
        return null;
      }
      case 'reveal_model':
        state.revealed.push(libraryModel(payload).path);
        return null;
      case 'load_model':
        return loadModelCmd(payload);
      case 'load_chat_model':
        return loadChatModel(payload);
      case 'use_local_model':
        return useLocalModel(payload);
      case 'cancel_load':
        state.loadCancelled = true;
        return true;
      case 'watch_model':
        modelWatchers.push(channel(payload.onUpdate));
        return null;
      case 'unload_model':
        spillCaches();
        state.model = null;
        state.keptModels = [];
        return null;
      case 'plugin:event|listen': {
        const id = nextEventId++;
        eventListeners.push({ event: payload.event, handler: payload.handler, id });
        return id;
      }
      case 'plugin:event|unlisten': {
        const at = eventListeners.findIndex((l) => l.event === payload.event && l.id === payload.eventId);
        if (at >= 0) eventListeners.splice(at, 1);
        return null;
      }
      default:
        return undefined;
    }
  }
  const MODEL_COMMANDS = [
    'hub_search', 'hub_repo_files', 'hub_fit', 'hub_token_status', 'set_hub_token', 'start_download', 'list_downloads', 'watch_downloads',
    'pause_download', 'resume_download', 'cancel_download', 'list_library', 'import_model', 'import_model_dialog', 'delete_model',
    'reveal_model', 'load_model', 'load_chat_model', 'use_local_model', 'cancel_load', 'watch_model', 'unload_model', 'plugin:event|listen',
    'plugin:event|unlisten',
  ];

  async function handle(cmd, payload) {
    if (MODEL_COMMANDS.includes(cmd)) return handleModels(cmd, payload);
    switch (cmd) {
      case 'list_chats':
        return sortedChats();
      case 'create_chat': {
        const chat = { id: state.nextId++, title: '', updatedAt: now(), pinned: false, systemPrompt: '', leafId: null, model: { kind: 'local', model: null } };
        state.chats.push(chat);
        return summary(chat);
      }
      case 'list_messages':
        return shownPath(findChat(payload.chatId));
      case 'send_message':
      case 'edit_message':
      case 'regenerate_reply':
      case 'continue_reply':
      case 'branch_reply':
        return runTurn(cmd, payload);
      case 'compare_replies':
        return compareReplies(payload);
      case 'token_probs': {
        const m = byId.get(payload.messageId);
        return m ? clone(tokenProbsOf(m)) : [];
      }
      case 'switch_branch':
        return switchBranch(payload);
      case 'delete_message':
        return deleteMessage(payload);
      case 'rename_chat':
        return updateChat(payload, 'title', (t) => t.trim());
      case 'pin_chat':
        return updateChat(payload, 'pinned');
      case 'set_system_prompt':
        return updateChat(payload, 'prompt');
      case 'delete_chat':
        return deleteChat(payload);
      case 'search_messages':
        return searchMessages(payload);
      case 'export_chats':
        return exportChats(payload);
      case 'import_chats':
        return importChats();
      case 'watch_chats':
        watchers.push(channel(payload.onUpdate));
        return null;
      case 'prefill_draft':
        return prefillDraft(payload);
      case 'chat_cache_usage':
        return cacheUsage();
      case 'compute_devices':
        return clone(state.devices);
      case 'set_chat_cache_budgets':
        return setCacheBudgets(payload);
      case 'clear_chat_caches':
        return clearCaches();
      case 'get_server':
        return serverStatus();
      case 'set_server':
        return setServer(payload);
      case 'set_server_key':
        return setServerKey(payload);
      case 'stop_generation': {
        const gen = state.generating.get(payload.chatId);
        if (gen) gen.stop = true;
        return null;
      }
      case 'active_model':
        return state.model ? clone(state.model) : null;
      case 'get_sampling':
        return getSampling(payload);
      case 'set_sampling':
        return setSampling(payload);
      case 'clear_sampling':
        delete state.sampling[scopeKey(cmd, payload.scope)];
        return null;
      case 'save_preset':
        return savePreset(payload);
      case 'delete_preset':
        state.presets = state.presets.filter((p) => p.name !== payload.name);
        return null;
      case 'get_load_settings':
        return loadSettings();
      case 'set_load_settings':
        return setLoadSettings(payload);
      case 'reload_model':
        return reloadModel();
      case 'list_providers':
        return clone(state.providers);
      case 'save_provider':
        return saveProvider(payload);
      case 'delete_provider':
        return deleteProvider(payload);
      case 'set_api_key':
        return setApiKey(payload);
      case 'list_provider_models':
        await delay(state.listDelayMs ?? 60);
        return listModels(payload);
      case 'test_provider':
        await delay(state.listDelayMs ?? 60);
        return { models: listModels(payload), latencyMs: 123.4 };
      case 'set_chat_model':
        return setChatModel(payload);
      case 'sampling_support_for':
        return samplingSupport(payload);
      default:
        state.contractErrors.push(`the mock does not answer ${cmd}`);
        throw { kind: 'invalidInput', message: `The mock does not answer ${cmd}` };
    }
  }

  async function invoke(cmd, args = {}) {
    const payload = JSON.parse(JSON.stringify(args ?? {}));
    state.calls.push({ cmd, payload });
    await delay(2);
    checkArgs(cmd, payload);
    try {
      const failure = state.failNext[cmd];
      if (failure) {
        delete state.failNext[cmd];
        throw clone(failure);
      }
      return await handle(cmd, payload);
    } catch (error) {
      checkErrorKind(cmd, error);
      throw error;
    }
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
