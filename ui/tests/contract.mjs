// ui/src/ipc/contract.json (generated from Rust) for the tests' fake and mock backends. Its numbers
// are as the backend's IPC sends them (an f32 0.8 is written 0.8), so it is read as it is.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// (Not `new URL(…, import.meta.url)`: Vite rewrites that pattern into an asset URL.)
const PATH = join(dirname(fileURLToPath(import.meta.url)), '../src/ipc/contract.json');

/** contract.json's data. */
export const CONTRACT = JSON.parse(readFileSync(PATH, 'utf8'));
