import type { UpdateProgress } from '../../src/ipc/bindings';
import { installPercent } from '../../src/lib/updates.svelte';
import { table } from './helpers';

table<UpdateProgress | null, number | null>('installPercent: how far an update got', installPercent, [
  [null, 0],
  [{ stage: 'downloading', downloaded: 0, total: 1000 }, 0],
  [{ stage: 'downloading', downloaded: 333, total: 1000 }, 33],
  [{ stage: 'downloading', downloaded: 1000, total: 1000 }, 100],
  // A server that gives no size: no percentage to show.
  [{ stage: 'downloading', downloaded: 5000, total: null }, null],
  [{ stage: 'installing' }, 100],
]);
