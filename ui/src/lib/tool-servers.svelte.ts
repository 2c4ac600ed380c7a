import type { EnterpriseIdentity, MachineCredentials, McpServerConfig, McpServerStatus } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { errorMessage } from './format';
import { withServer, withTool } from './tool-servers';

/**
 * What the user did that can fail, each with its own last error: reading the list, a switch or a
 * removal (`save`), the add or edit form (`put`), pasted JSON (`paste`), a restart, a stop, a sign-in.
 */
export type ToolAction = 'load' | 'save' | 'put' | 'paste' | 'restart' | 'stop' | 'signIn';

/** Why an action failed, in the backend's words; `server`: the server it was about, if one. */
export type ToolError = { message: string; server: string | null };

/**
 * Settings → Tools: the user's MCP servers and where each stands (off, starts when needed, starting,
 * ready with its tools, failed with its stderr, asking to sign in), kept current by the backend's `watchToolServers`.
 * Every change saves the whole list (`saveToolServers`); pasted `mcpServers` JSON is added by the
 * backend (`addToolServers`). Environment and header values are secrets: they come and go with the
 * configs, and are never logged.
 */
export class ToolServersStore {
  /** The servers in the backend's order, with their state. */
  servers = $state<McpServerStatus[]>([]);
  /** The list was read at least once. */
  loaded = $state(false);
  /** A change (a save, a paste) is under way. */
  saving = $state(false);
  /** Servers whose restart, stop or sign-in is under way. */
  busy = $state<string[]>([]);
  /** The last error of each action; the next success of that action clears it. */
  errors = $state<Record<ToolAction, ToolError | null>>({ load: null, save: null, put: null, paste: null, restart: null, stop: null, signIn: null });

  readonly #api: HearthApi;
  #watching: Promise<void> | null = null;
  #changes = 0;

  constructor(api: HearthApi) {
    this.#api = api;
  }

  /** The saved configs, in order. */
  get configs(): McpServerConfig[] {
    return this.servers.map((s) => s.config);
  }

  status(name: string): McpServerStatus | undefined {
    return this.servers.find((s) => s.config.name === name);
  }

  /** Read the list, and from the first call on follow every change of a server's state. */
  async load(): Promise<void> {
    // The backend keeps the channel for the window's life: one is enough.
    this.#watching ??= this.#api
      .watchToolServers((servers) => {
        this.servers = servers;
        this.loaded = true;
      })
      .then(
        () => {},
        (e) => {
          this.#watching = null; // the next load tries again
          this.#fail('load', e);
        },
      );
    try {
      this.servers = await this.#api.listToolServers();
      this.loaded = true;
      this.errors.load = null;
    } catch (e) {
      this.#fail('load', e);
    }
  }

  /**
   * Save the whole list; true once saved (the refusal is `errors.save`). `shownAtOnce`: the list is
   * shown as saved while it is (a switch moves when clicked), and back as it was if refused.
   */
  async save(configs: McpServerConfig[], shownAtOnce = false, action: 'save' | 'put' = 'save'): Promise<boolean> {
    const before = this.servers;
    if (shownAtOnce) {
      this.servers = configs.map((config) => ({ config, state: this.status(config.name)?.state ?? { state: 'idle' } }));
    }
    const saved = await this.#change(action, () => this.#api.saveToolServers(configs));
    if (!saved && shownAtOnce) this.servers = before;
    return saved;
  }

  /** Add a server, or (`previous`: the name it had) put an edited one in its place; then try it. */
  async put(config: McpServerConfig, previous: string | null): Promise<boolean> {
    const configs = previous === null ? [...this.configs, config] : withServer(this.configs, previous, () => config);
    if (!(await this.save(configs, false, 'put'))) return false;
    if (config.enabled) void this.restart(config.name);
    return true;
  }

  /** Add the servers of pasted `mcpServers` JSON (the backend reads it); then try those switched on. */
  async add(json: string): Promise<boolean> {
    const before = new Map(this.configs.map((c) => [c.name, c]));
    const ok = await this.#change('paste', () => this.#api.addToolServers(json));
    if (!ok) return false;
    // What the paste added or replaced: a server not there before, or one whose settings changed.
    const added = this.configs.filter((c) => c.enabled && JSON.stringify(before.get(c.name)) !== JSON.stringify(c));
    for (const config of added) void this.restart(config.name);
    return true;
  }

  remove(name: string): Promise<boolean> {
    return this.save(this.configs.filter((c) => c.name !== name));
  }

  /** Switch the server on (it starts when a chat needs its tools) or off (stopped, its tools never offered). */
  setEnabled(name: string, on: boolean): Promise<boolean> {
    return this.save(
      withServer(this.configs, name, (c) => ({ ...c, enabled: on })),
      true,
    );
  }

  /** Offer the tool to the model, or not. */
  setToolEnabled(name: string, tool: string, on: boolean): Promise<boolean> {
    return this.save(
      withServer(this.configs, name, (c) => withTool(c, tool, on)),
      true,
    );
  }

  /** Start the server again; a failed start is no error: it shows in its state. */
  restart(name: string): Promise<boolean> {
    return this.#serverAction('restart', name, () => this.#api.restartToolServer(name));
  }

  stop(name: string): Promise<boolean> {
    return this.#serverAction('stop', name, () => this.#api.stopToolServer(name));
  }

  /** Sign in to a server that asked: its sign-in page opens in the browser; resolves once the user is done there. */
  signIn(name: string): Promise<boolean> {
    return this.#serverAction('signIn', name, () => this.#api.signInToolServer(name));
  }

  /**
   * Sign in to a server as a machine client its organisation registered Hearth as (its id, and its secret or
   * private key): kept in the keychain by the backend, which signs in with it now and whenever its token runs out.
   */
  signInAsClient(name: string, credentials: MachineCredentials): Promise<boolean> {
    return this.#serverAction('signIn', name, () => this.#api.signInToolServerAsClient(name, credentials));
  }

  /**
   * Sign in to a server with the user's enterprise identity, the user signing in for it at the identity provider's
   * page (opened in the browser); resolves once they are done there and the server has started again.
   */
  signInAtIdp(name: string, identity: EnterpriseIdentity): Promise<boolean> {
    return this.#serverAction('signIn', name, () => this.#api.signInToolServerAtIdp(name, identity));
  }

  clearError(action: ToolAction): void {
    this.errors[action] = null;
  }

  async #serverAction(action: 'restart' | 'stop' | 'signIn', name: string, request: () => Promise<McpServerStatus[]>): Promise<boolean> {
    this.busy = [...this.busy, name];
    try {
      this.servers = await request();
      if (this.errors[action]?.server === name) this.errors[action] = null;
      return true;
    } catch (e) {
      this.#fail(action, e, name);
      return false;
    } finally {
      const at = this.busy.indexOf(name);
      this.busy = this.busy.filter((_, i) => i !== at);
    }
  }

  async #change(action: 'save' | 'put' | 'paste', request: () => Promise<McpServerStatus[]>): Promise<boolean> {
    this.#changes += 1;
    this.saving = true;
    try {
      this.servers = await request();
      this.errors[action] = null;
      return true;
    } catch (e) {
      this.#fail(action, e);
      return false;
    } finally {
      this.#changes -= 1;
      this.saving = this.#changes > 0;
    }
  }

  #fail(action: ToolAction, error: unknown, server: string | null = null): void {
    this.errors[action] = { message: errorMessage(error), server };
  }
}
