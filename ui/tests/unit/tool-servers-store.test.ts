import { describe, expect, it, vi } from 'vitest';
import type { McpServerConfig, McpServerStatus } from '../../src/ipc/bindings';
import { ToolServersStore } from '../../src/lib/tool-servers.svelte';
import { fakeApi } from './helpers';

const stdio = (name: string, over: Partial<McpServerConfig> = {}): McpServerConfig => ({
  name,
  transport: { kind: 'stdio', command: 'npx', args: [name], env: {}, cwd: null },
  enabled: true,
  disabledTools: [],
  ...over,
});
const TWO_SERVERS = 'two servers are named "files"';

/** A backend that keeps the list, tells the watcher of every change and answers restarts at once. */
function fakeBackend(initial: McpServerStatus[] = []) {
  const backend = { servers: structuredClone(initial), watcher: null as ((servers: McpServerStatus[]) => void) | null };
  const list = () => structuredClone(backend.servers);
  const tell = () => backend.watcher?.(list());
  const save = (configs: McpServerConfig[]) => {
    if (new Set(configs.map((c) => c.name)).size < configs.length) throw { kind: 'invalidInput', message: TWO_SERVERS, field: 'mcpServers' };
    backend.servers = configs.map((config) => ({
      config,
      state: backend.servers.find((s) => s.config.name === config.name)?.state ?? (config.enabled ? { state: 'idle' } : { state: 'off' }),
    }));
    tell();
    return list();
  };
  const api = fakeApi('the tool servers store', {
    listToolServers: vi.fn(async () => list()),
    watchToolServers: vi.fn(async (on: (servers: McpServerStatus[]) => void) => {
      backend.watcher = on;
      return null;
    }),
    saveToolServers: vi.fn(async (configs: McpServerConfig[]) => save(configs)),
    addToolServers: vi.fn(async (json: string) => {
      let pasted: Record<string, { command: string }>;
      try {
        pasted = JSON.parse(json).mcpServers;
      } catch {
        throw { kind: 'invalidInput', message: 'this is not JSON: EOF while parsing', field: 'mcpServers' };
      }
      const added = Object.entries(pasted).map(([name, e]) => stdio(name, { transport: { kind: 'stdio', command: e.command, args: [], env: {}, cwd: null } }));
      return save([...backend.servers.map((s) => s.config).filter((c) => !added.some((a) => a.name === c.name)), ...added]);
    }),
    restartToolServer: vi.fn(async (name: string) => {
      const server = backend.servers.find((s) => s.config.name === name);
      if (!server) throw { kind: 'invalidInput', message: `no MCP server is named "${name}"`, field: 'name' };
      server.state = { state: 'starting' };
      tell();
      server.state = { state: 'ready', tools: [] };
      tell();
      return list();
    }),
    stopToolServer: vi.fn(async (name: string) => {
      const server = backend.servers.find((s) => s.config.name === name)!;
      server.state = { state: 'idle' };
      tell();
      return list();
    }),
  });
  return { backend, api, tell };
}

const names = (store: ToolServersStore) => store.servers.map((s) => `${s.config.name}:${s.state.state}`);

describe('ToolServersStore', () => {
  it('reads the list, follows the watch from the first load on, and subscribes once', async () => {
    const { backend, api, tell } = fakeBackend([{ config: stdio('files'), state: { state: 'idle' } }]);
    const store = new ToolServersStore(api);
    expect(store.loaded).toBe(false);
    await store.load();
    await store.load();
    expect(store.loaded).toBe(true);
    expect(api.watchToolServers).toHaveBeenCalledTimes(1);
    expect(names(store)).toEqual(['files:idle']);

    backend.servers[0].state = { state: 'failed', message: 'it stopped', stderr: ['panic: no'] };
    tell();
    expect(store.servers[0].state).toEqual({ state: 'failed', message: 'it stopped', stderr: ['panic: no'] });
  });

  it('a failed read is said, and the next load tries the watch again', async () => {
    const { api } = fakeBackend();
    const store = new ToolServersStore(api);
    vi.mocked(api.listToolServers).mockRejectedValueOnce({ kind: 'store', message: 'the database is locked' });
    vi.mocked(api.watchToolServers).mockRejectedValueOnce({ kind: 'store', message: 'the database is locked' });
    await store.load();
    expect(store.errors.load).toEqual({ message: 'the database is locked', server: null });
    expect(store.loaded).toBe(false);
    await store.load();
    expect(store.errors.load).toBeNull();
    expect(api.watchToolServers).toHaveBeenCalledTimes(2);
  });

  it('a tool switched off saves the whole list with it in disabledTools; shown at once, back if refused', async () => {
    const { api } = fakeBackend([
      { config: stdio('files'), state: { state: 'ready', tools: [] } },
      { config: stdio('git'), state: { state: 'idle' } },
    ]);
    const store = new ToolServersStore(api);
    await store.load();
    const saving = store.setToolEnabled('files', 'write_file', false);
    expect(store.servers[0].config.disabledTools).toEqual(['write_file']); // the checkbox moves at once
    expect(store.saving).toBe(true);
    expect(await saving).toBe(true);
    expect(api.saveToolServers).toHaveBeenLastCalledWith([stdio('files', { disabledTools: ['write_file'] }), stdio('git')]);
    expect(store.servers[0].state.state).toBe('ready');
    expect(store.saving).toBe(false);

    vi.mocked(api.saveToolServers).mockRejectedValueOnce({ kind: 'keychain', message: 'the keychain is locked' });
    expect(await store.setEnabled('git', false)).toBe(false);
    expect(store.servers[1].config.enabled).toBe(true);
    expect(store.errors.save?.message).toBe('the keychain is locked');
    expect(await store.setToolEnabled('files', 'write_file', true)).toBe(true);
    expect(store.errors.save).toBeNull();
    expect(store.servers[0].config.disabledTools).toEqual([]);
  });

  it('pasted JSON goes to the backend; the servers it added or changed are started, the rest left alone', async () => {
    const { api } = fakeBackend([
      { config: stdio('files', { transport: { kind: 'stdio', command: 'npx', args: [], env: {}, cwd: null } }), state: { state: 'ready', tools: [] } },
      { config: stdio('old'), state: { state: 'idle' } },
    ]);
    const store = new ToolServersStore(api);
    await store.load();
    const json = JSON.stringify({ mcpServers: { files: { command: 'npx' }, git: { command: 'uvx' }, web: { command: 'deno' } } });
    expect(await store.add(json)).toBe(true);
    expect(api.addToolServers).toHaveBeenCalledWith(json);
    await vi.waitFor(() => expect(names(store)).toEqual(['old:idle', 'files:ready', 'git:ready', 'web:ready']));
    expect(vi.mocked(api.restartToolServer).mock.calls.map(([name]) => name)).toEqual(['git', 'web']);
  });

  it('a refused paste keeps its words under paste, nothing started', async () => {
    const { api } = fakeBackend();
    const store = new ToolServersStore(api);
    await store.load();
    expect(await store.add('{"mcpServers": ')).toBe(false);
    expect(store.errors.paste).toEqual({ message: 'this is not JSON: EOF while parsing', server: null });
    expect(store.errors.save).toBeNull();
    expect(api.restartToolServer).not.toHaveBeenCalled();
  });

  it('the form adds at the end, or puts an edited server in its place (renamed too), then starts it when on', async () => {
    const { api } = fakeBackend([
      { config: stdio('a'), state: { state: 'idle' } },
      { config: stdio('b'), state: { state: 'idle' } },
    ]);
    const store = new ToolServersStore(api);
    await store.load();
    expect(await store.put(stdio('c', { enabled: false }), null)).toBe(true);
    expect(store.configs.map((c) => c.name)).toEqual(['a', 'b', 'c']);
    expect(api.restartToolServer).not.toHaveBeenCalled();

    expect(await store.put(stdio('a2'), 'a')).toBe(true);
    expect(api.saveToolServers).toHaveBeenLastCalledWith([stdio('a2'), stdio('b'), stdio('c', { enabled: false })]);
    await vi.waitFor(() => expect(api.restartToolServer).toHaveBeenCalledWith('a2'));

    // A name another server has: the backend's words under the form's action.
    expect(await store.put(stdio('b'), 'c')).toBe(false);
    expect(store.errors.put?.message).toBe(TWO_SERVERS);
    expect(store.errors.save).toBeNull();
    store.clearError('put');
    expect(store.errors.put).toBeNull();
  });

  it('restart and stop answer the new list; a refusal is kept with the server it was about', async () => {
    const { api } = fakeBackend([{ config: stdio('files'), state: { state: 'idle' } }]);
    const store = new ToolServersStore(api);
    await store.load();
    const restarting = store.restart('files');
    expect(store.busy).toEqual(['files']);
    expect(await restarting).toBe(true);
    expect(store.busy).toEqual([]);
    expect(names(store)).toEqual(['files:ready']);
    expect(await store.stop('files')).toBe(true);
    expect(names(store)).toEqual(['files:idle']);

    expect(await store.restart('gone')).toBe(false);
    expect(store.errors.restart).toEqual({ message: 'no MCP server is named "gone"', server: 'gone' });
    expect(await store.restart('files')).toBe(true);
    expect(store.errors.restart?.server).toBe('gone'); // about another server: it stays
  });

  it('remove saves the list without it', async () => {
    const { api } = fakeBackend([
      { config: stdio('a'), state: { state: 'idle' } },
      { config: stdio('b'), state: { state: 'idle' } },
    ]);
    const store = new ToolServersStore(api);
    await store.load();
    expect(await store.remove('a')).toBe(true);
    expect(api.saveToolServers).toHaveBeenLastCalledWith([stdio('b')]);
    expect(names(store)).toEqual(['b:idle']);
  });
});
