/**
 * In-page mock of the Tauri IPC layer and of the backend behind it, bundled by the harness (harness.mjs) into one
 * script that runs before the app loads: `installMockTauri(config)` with the test's MockConfig (state.ts).
 *
 * Every command is typed by the bindings generated from Rust (src/ipc/bindings.ts): `handlers` below must answer
 * each of them, each handler taking that command's arguments and answering its result (ipc.ts' `Handlers`), so a
 * command added, removed or reshaped in Rust fails `npm run check` here instead of drifting. What the backend
 * owns as data comes from contract.json (contract.ts): every command's arguments (checked on each invoke), the
 * error kinds (checked on each error), sampling defaults, ranges (with their wording and whole-number flags),
 * presets and stage order, what "never" means for a logit bias, load defaults and ranges, the context a fit
 * assumes without one in the header, the chats' cache budgets (defaults, ranges and their wording), the server's
 * settings (defaults, the port's range and its wording), the providers on first start, each provider kind's
 * facts, and which sampling settings reach each kind of provider.
 *
 * The parts, one job each:
 *   ipc.ts        Tauri's invoke, callbacks and channels; the argument check; `Handlers`
 *   state.ts      the config a test passes and the state the tests read (`window.__hearthMock`)
 *   history.ts    chats and their history as a tree; transfer.ts export and import; search.ts search
 *   turns.ts      send, edit, regenerate, continue, branch, compare, stop, tool rounds (answer_tool_call); reply.ts how
 *                 a reply is written; attachments.ts the files a message carries (attach_file, attach_bytes,
 *                 pick_attachments)
 *   inspector.ts  the token inspector's distributions
 *   sampling.ts   sampling settings per scope, presets; load.ts the loaded model's load settings
 *   caches.ts     chats' KV caches, their budgets, kept models, drafts read ahead
 *   providers.ts  remote providers and their keys; server.ts the OpenAI-compatible server
 *   hub.ts        Hugging Face search, files and fit; downloads.ts downloads; library.ts the GGUF library
 *   loading.ts    loading models, each chat's own model, the idle unload; events.ts Tauri's events
 *   updates.ts    signed updates: the check, the install's progress, the restart
 *   tools.ts      Settings → Tools' MCP servers: their list, scripted starts, the watch channel
 */
import { attachmentCommands } from './attachments';
import { cacheCommands, initCaches } from './caches';
import { downloadCommands } from './downloads';
import { eventCommands, initEvents } from './events';
import { historyCommands, initHistory } from './history';
import { hubCommands } from './hub';
import { inspectorCommands } from './inspector';
import { installIpc, type Handlers } from './ipc';
import { libraryCommands } from './library';
import { initLoad, loadCommands } from './load';
import { initLoading, loadingCommands } from './loading';
import { initProviders, providerCommands } from './providers';
import { initSampling, samplingCommands } from './sampling';
import { searchCommands } from './search';
import { serverCommands } from './server';
import { createState, type MockConfig } from './state';
import { transferCommands } from './transfer';
import { toolCommands } from './tools';
import { turnCommands } from './turns';
import { updateCommands } from './updates';

/** Every command the backend answers: the type check fails if one is missing or answers the wrong thing. */
const handlers: Handlers = {
  ...historyCommands,
  ...searchCommands,
  ...transferCommands,
  ...turnCommands,
  ...attachmentCommands,
  ...inspectorCommands,
  ...samplingCommands,
  ...loadCommands,
  ...cacheCommands,
  ...serverCommands,
  ...providerCommands,
  ...hubCommands,
  ...downloadCommands,
  ...libraryCommands,
  ...loadingCommands,
  ...updateCommands,
  ...toolCommands,
};

export function installMockTauri(config: MockConfig) {
  const state = createState(config);
  (window as unknown as { __hearthMock: typeof state }).__hearthMock = state;
  initLoad();
  initSampling();
  initHistory();
  initProviders();
  initCaches();
  initLoading();
  initEvents();
  installIpc(handlers, eventCommands);
}
