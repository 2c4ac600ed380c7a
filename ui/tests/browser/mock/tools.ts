// Settings → Tools' MCP servers, as src-tauri/ipc/tools.rs and hearth-mcp's hub answer them: the list with
// each server's state (`toolServers`), saved whole; pasted `mcpServers` JSON added; a restart that goes
// starting → ready with its tools or → failed with its stderr as the test scripted it (`toolScripts`, by name);
// a stop; a sign-in (OAuth) to a server that asks; the servers' questions to the user (`toolQuestions`) and their
// answers (`questionAnswers`); and the watch channel, sent the whole list at every change. The mock checks nothing the backend
// checks: a test that wants a refusal names it (`failNext`). It keeps only what the scenarios rely on: a
// server whose process is unchanged (only its switches for tools changed) keeps running through a save.
import type { Answer, EnterpriseIdentity, MachineCredentials, McpServerConfig, McpServerStatus, McpTransport, PendingQuestion } from '../../../src/ipc/bindings';
import type { Handlers, Sink } from './ipc';
import { state } from './state';
import { clone, delay, ipcError, refuse } from './util';

/** How long a start takes when the script does not say. */
const START_MS = 300;

const watchers: Sink<McpServerStatus[]>[] = [];
const questionWatchers: Sink<PendingQuestion[]>[] = [];
/** Each server's start under way, by name: a stop or a change makes it moot. */
const starts = new Map<string, number>();
let nextStart = 1;

const list = () => clone(state.toolServers);

function notify() {
  for (const w of watchers) w.send(list());
}

function find(name: string): McpServerStatus {
  const found = state.toolServers.find((s) => s.config.name === name);
  if (!found) throw refuse('name', `no MCP server is named ${JSON.stringify(name)}`);
  return found;
}

const sameProcess = (a: McpServerConfig, b: McpServerConfig) => JSON.stringify(a.transport) === JSON.stringify(b.transport);

function save(configs: McpServerConfig[]) {
  state.toolServers = configs.map((config) => {
    const before = state.toolServers.find((s) => s.config.name === config.name);
    const kept = before && config.enabled && before.config.enabled && sameProcess(before.config, config);
    if (!kept) starts.delete(config.name);
    return { config: clone(config), state: kept ? before.state : config.enabled ? { state: 'idle' } : { state: 'off' } };
  });
  for (const name of [...starts.keys()]) if (!configs.some((c) => c.name === name)) starts.delete(name);
  notify();
  return list();
}

/** The servers of pasted JSON: `{"mcpServers": …}`, `{"servers": …}` or the bare object. */
function pasted(json: string): McpServerConfig[] {
  let root: Record<string, unknown>;
  try {
    root = JSON.parse(json) as Record<string, unknown>;
  } catch (e) {
    throw refuse('mcpServers', `this is not JSON: ${(e as Error).message}`);
  }
  const servers = (root.mcpServers ?? root.servers ?? root) as Record<string, Record<string, unknown>>;
  return Object.entries(servers).map(([name, entry]) => {
    const transport: McpTransport =
      typeof entry.url === 'string'
        ? { kind: 'http', url: entry.url, headers: (entry.headers as Record<string, string>) ?? {} }
        : {
            kind: 'stdio',
            command: String(entry.command ?? ''),
            args: (entry.args as string[]) ?? [],
            env: (entry.env as Record<string, string>) ?? {},
            cwd: (entry.cwd as string) ?? null,
          };
    return { name, transport, enabled: entry.disabled !== true, disabledTools: [] };
  });
}

async function restart(name: string) {
  const server = find(name);
  const start = nextStart++;
  starts.set(name, start);
  server.state = { state: 'starting' };
  notify();
  const script = state.toolScripts[name] ?? {};
  await delay(script.startMs ?? START_MS);
  const now = state.toolServers.find((s) => s.config.name === name);
  if (starts.get(name) !== start || !now) return list();
  starts.delete(name);
  const signedIn = signedInTo.has(name) || Object.keys(headersOf(now.config)).some((h) => h.toLowerCase() === 'authorization');
  now.state = script.failed
    ? { state: 'failed', message: script.failed.message, stderr: [...script.failed.stderr] }
    : script.signIn && !signedIn
      ? { state: 'signIn' }
      : { state: 'ready', tools: clone(script.tools ?? []) };
  notify();
  return list();
}

const headersOf = (config: McpServerConfig): Record<string, string> => (config.transport.kind === 'http' ? config.transport.headers : {});

/** The servers signed in to: their sign-ins are kept apart from their configs (the backend's keychain). */
const signedInTo = new Set<string>();

/**
 * The user signs in in the browser (`signInMs`): the sign-in is kept (apart from the server's config, whose
 * headers lose a token given by hand) and the server starts again; or the sign-in fails in `signInFailed`'s words.
 */
async function signIn(name: string) {
  const { transport } = signsIn(name);
  const script = state.toolScripts[name] ?? {};
  await delay(script.signInMs ?? START_MS);
  if (script.signInFailed) throw ipcError('network', `signing in failed: ${script.signInFailed}`);
  signedInTo.add(name);
  transport.headers = Object.fromEntries(Object.entries(transport.headers).filter(([h]) => h.toLowerCase() !== 'authorization'));
  return restart(name);
}

/**
 * A machine client's sign-in (as ToolServers::sign_in_as_client): checked before anything is sent, then the server
 * starts again — signed in when the script's `machineSecret` is the one given, else failed in the authorization
 * server's words (a state, not an error); an enterprise identity likewise with the script's `idpToken`.
 * `machineSignIns` keeps what was given, as the keychain would.
 */
async function signInAsClient(name: string, credentials: MachineCredentials) {
  const { server } = signsIn(name);
  if (!credentials.clientId.trim()) throw ipcError('invalidInput', "signing in failed: give the client id the server's organisation registered Hearth as");
  if (credentials.kind === 'secret' && !credentials.clientSecret) throw ipcError('invalidInput', "signing in failed: give the client's secret");
  if (credentials.kind === 'enterprise' && !credentials.idpToken.trim()) throw ipcError('invalidInput', 'signing in failed: give the ID token your identity provider issued');
  state.machineSignIns.push({ name, credentials: clone(credentials) });
  const script = state.toolScripts[name] ?? {};
  await delay(script.signInMs ?? START_MS);
  const taken = credentials.kind === 'enterprise' ? credentials.idpToken === script.idpToken : credentials.kind === 'secret' && credentials.clientSecret === script.machineSecret;
  if (taken) {
    signedInTo.add(name);
    return restart(name);
  }
  server.state = { state: 'failed', message: 'signing in failed: the authorization server refused the client: invalid_client', stderr: [] };
  notify();
  return list();
}

/**
 * An enterprise identity's sign-in at its identity provider's page (as ToolServers::sign_in_at_idp): checked, then
 * the user signs in in the browser (`signInMs`): refused in `signInFailed`'s words (an error; the server is left as
 * it was), else the refresh token the provider issued (the script's `idpToken`) is kept as a machine client's.
 */
async function signInAtIdp(name: string, identity: EnterpriseIdentity) {
  signsIn(name);
  if (!identity.idpClientId.trim()) throw ipcError('invalidInput', 'signing in failed: give the client id your organisation registered Hearth as at its identity provider');
  const script = state.toolScripts[name] ?? {};
  await delay(script.signInMs ?? START_MS);
  if (script.signInFailed) throw ipcError('network', `signing in failed: ${script.signInFailed}`);
  return signInAsClient(name, { kind: 'enterprise', ...identity, idpToken: script.idpToken ?? '', idpTokenKind: 'refreshToken' });
}

/** Server `name` and its transport, refused in words when it is started as a program (only a server over HTTP signs in). */
function signsIn(name: string) {
  const server = find(name);
  const transport = server.config.transport;
  if (transport.kind !== 'http') {
    throw ipcError('invalidInput', `${JSON.stringify(name)} is started as a program, which does not sign in: give it its token in its environment`);
  }
  return { server, transport };
}

function stop(name: string) {
  const server = find(name);
  starts.delete(name);
  server.state = server.config.enabled ? { state: 'idle' } : { state: 'off' };
  notify();
  return list();
}

/**
 * Answers a question waiting (as ToolQuestions::answer): one withdrawn or answered before is refused in its words;
 * a link said yes to is opened first (`opened`), and stays asked when the browser cannot be (`browserFails`).
 */
function answerQuestion(id: number, answer: Answer) {
  const at = state.toolQuestions.findIndex((q) => q.id === id);
  if (at < 0) throw refuse('id', 'this question was withdrawn: the call that asked it has ended');
  const link = state.toolQuestions[at].link;
  if (link && answer.action === 'accept') {
    if (state.browserFails) throw refuse('answer', `the browser could not be opened: ${state.browserFails}`);
    state.opened.push(link.url);
  }
  state.toolQuestions.splice(at, 1);
  state.questionAnswers.push({ id, answer: clone(answer) });
  for (const w of questionWatchers) w.send(clone(state.toolQuestions));
  return null;
}

export const toolCommands = {
  listToolServers: () => list(),
  saveToolServers: async (servers) => save(servers),
  addToolServers: async (json) => {
    const added = pasted(json);
    return save([...state.toolServers.map((s) => s.config).filter((c) => !added.some((a) => a.name === c.name)), ...added]);
  },
  restartToolServer: restart,
  stopToolServer: async (name) => stop(name),
  signInToolServer: signIn,
  signInToolServerAsClient: signInAsClient,
  signInToolServerAtIdp: signInAtIdp,
  watchToolQuestions: (onUpdate) => {
    questionWatchers.push(onUpdate);
    onUpdate.send(clone(state.toolQuestions));
    return null;
  },
  answerToolQuestion: answerQuestion,
  watchToolServers: (onUpdate) => {
    watchers.push(onUpdate);
    return null;
  },
} satisfies Partial<Handlers>;
