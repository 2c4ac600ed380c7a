// Browser tests of the model manager: Hugging Face search, quantizations and their fit on this machine,
// the token for gated repositories, downloads (progress, pause and resume, a dropped connection retried,
// a full disk, cancel), the library (load with progress, a failed load, unload, reveal, delete, import by
// dialog and by drop), and how loading a model shows in the chat header.
// Run with `npm run test:browser`; screenshots go to tests/browser/output/.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BROKEN, MODEL, MODELS_DIR, OUTPUT, PHI, QWEN_05, TIMEOUT, TINY, mockState, shot, useBrowser, withApp } from './harness.mjs';
import { BIG, BROKEN_ERROR, DISK_FULL, GATED, GATED_MESSAGE, KEY_FILE, OUT_OF_MEMORY, QWEN, SMOL, SMOL_17, callsOf, checkFit, download, downloadOf, mock, openModels, openRepo, progressOf, quant, rememberedDownloads, repo, row, search, stateOf, text } from './models-helpers.mjs';

useBrowser();


describe('Discover: search Hugging Face, check the fit, download', () => {
  test('search → open a repo → fit verdicts → download with progress → pause, resume → done → load', { timeout: 2 * TIMEOUT }, async () => {
    await withApp({}, async (page) => {
      await openModels(page, 'discover');
      assert.equal(await text(page.getByTestId('hub-empty')), 'Search Hugging Face for GGUF models, e.g. “qwen2.5 instruct gguf”');

      // Enter searches; so does the button. Each result says how it stands on the hub.
      await search(page, 'smollm2 135m');
      assert.deepEqual(await page.getByTestId('hub-repo').evaluateAll((els) => els.map((e) => e.dataset.repo)), [SMOL]);
      assert.equal(await text(repo(page, SMOL).getByTestId('repo-meta')), '48.2k downloads · 37 likes · updated 3 days ago');
      assert.equal(await repo(page, SMOL).getByTestId('gated-badge').count(), 0);
      await search(page, 'qwen2.5 instruct gguf', { enter: false });
      assert.deepEqual(await callsOf(page, 'hub_search'), [{ query: 'smollm2 135m' }, { query: 'qwen2.5 instruct gguf' }]);

      // The quantizations, smallest first, with their sizes and parts.
      await openRepo(page, QWEN);
      assert.equal(await repo(page, QWEN).getByTestId('open-repo').getAttribute('aria-expanded'), 'true');
      const quants = repo(page, QWEN).getByTestId('hub-quant');
      assert.deepEqual(await quants.evaluateAll((els) => els.map((e) => e.dataset.quant)), ['Q2_K', 'Q4_K_M', 'Q8_0']);
      assert.equal(await text(quant(page, QWEN, 'Q4_K_M').getByTestId('quant-size')), '4.7 GB');
      assert.equal(await text(quant(page, QWEN, 'Q4_K_M').getByTestId('quant-parts')), '2 parts');
      assert.equal(await text(quant(page, QWEN, 'Q8_0').getByTestId('quant-parts')), '3 parts');
      assert.equal(await quant(page, QWEN, 'Q2_K').getByTestId('quant-parts').count(), 0);

      // Checked at the model's own context: too big for the GPU alone.
      const q4 = quant(page, QWEN, 'Q4_K_M');
      await checkFit(page, QWEN, 'Q4_K_M', 'Fits with 24 of 28 layers on GPU');
      assert.equal(await q4.getByTestId('fit-verdict').getAttribute('data-tone'), 'partial');
      assert.equal(
        await text(q4.getByTestId('fit-detail')),
        'weights 4.7 GB + KV cache 1.9 GB at 32,768 tokens + compute 0.3 GB = 6.9 GB of 6.0 GB free VRAM and 12.4 GB free RAM',
      );
      assert.equal(await q4.getByTestId('fit-context').inputValue(), '32768');
      const facts = await q4.locator('[data-testid="fit-facts"] [data-fact] dd').evaluateAll((els) => els.map((e) => e.textContent.trim()));
      assert.deepEqual(facts, ['qwen2', '7.6B parameters', 'Q4_K_M', '32,768-token context', 'chat template']);
      assert.deepEqual((await callsOf(page, 'hub_fit'))[0], { repo: QWEN, file: 'qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf', contextLength: null });

      // A smaller context fits.
      await q4.getByTestId('fit-context').fill('4096');
      await q4.getByTestId('fit-context').press('Enter');
      await q4.getByTestId('fit-verdict').filter({ hasText: 'Fits in memory' }).waitFor();
      assert.equal(await q4.getByTestId('fit-verdict').getAttribute('data-tone'), 'fits');
      assert.match(await text(q4.getByTestId('fit-detail')), /KV cache 0\.2 GB at 4,096 tokens/);
      assert.deepEqual((await callsOf(page, 'hub_fit')).at(-1).contextLength, 4096);

      // Too large whatever the context.
      await search(page, 'llama 70b');
      await openRepo(page, BIG);
      await checkFit(page, BIG, 'Q4_K_M', 'Too large for this machine');
      assert.equal(await quant(page, BIG, 'Q4_K_M').getByTestId('fit-verdict').getAttribute('data-tone'), 'tooLarge');
      // A download the disk cannot hold is refused before it starts, in words.
      await quant(page, BIG, 'F16').getByTestId('download-quant').click();
      await quant(page, BIG, 'F16')
        .getByTestId('download-error')
        .filter({ hasText: 'Not downloaded: not enough disk space for unsloth/Llama-3.3-70B-Instruct-GGUF F16: it needs 141.1 GB and /home has 20.3 GB free' })
        .waitFor();

      // Download: the Downloads tab shows it going.
      await search(page, 'smollm2 135m');
      await openRepo(page, SMOL);
      assert.deepEqual(await repo(page, SMOL).getByTestId('hub-quant').evaluateAll((els) => els.map((e) => e.dataset.quant)), ['Q4_1', 'Q8_0', 'F16']);
      await quant(page, SMOL, 'Q8_0').getByTestId('download-quant').click();
      await page.getByTestId('models-tab-downloads').and(page.locator('[aria-selected="true"]')).waitFor();
      assert.deepEqual((await callsOf(page, 'start_download')).at(-1), { repo: SMOL, quant: 'Q8_0', files: ['smollm2-135m-instruct-q8_0.gguf'] });
      const card = page.getByTestId('download');
      await stateOf(card, 'running');
      assert.equal(await text(page.getByTestId('downloads-count')), '1');
      assert.equal(await text(page.getByTestId('models-downloading')), '1');
      assert.match(await text(card.getByTestId('download-detail')), /^[\d.]+ MB of 144\.8 MB · 23\.4 MB\/s · \d+ s left$/);
      assert.match(await text(card.getByTestId('download-state')), /^Downloading$/);
      assert.match(await card.textContent(), /SmolLM2-135M-Instruct-GGUF/);

      // Pause holds it where it is; Resume goes on.
      await card.getByTestId('pause-download').click();
      await stateOf(card, 'paused');
      const held = await progressOf(card);
      assert.ok(held > 0 && held < 100, `paused part-way, at ${held}%`);
      assert.equal(await text(card.getByTestId('download-state')), 'Paused');
      assert.doesNotMatch(await text(card.getByTestId('download-detail')), /MB\/s/);
      await page.waitForTimeout(300);
      assert.equal(await progressOf(card), held, 'a paused download does not move');
      await card.getByTestId('resume-download').click();
      await stateOf(card, 'done');
      assert.equal(await progressOf(card), 100);
      assert.equal(await text(card.getByTestId('download-detail')), '144.8 MB');
      assert.equal(await page.getByTestId('downloads-count').count(), 0);
      assert.equal(await page.getByTestId('models-downloading').count(), 0);
      const id = await card.getAttribute('data-id');
      assert.deepEqual(await callsOf(page, 'pause_download'), [{ id }]);
      assert.deepEqual(await callsOf(page, 'resume_download'), [{ id }]);

      // Load it from here: progress, then Loaded, and the chat header names it.
      await card.getByTestId('load-downloaded').click();
      await card.getByTestId('loaded-badge').waitFor();
      const path = (await mock(page, 'downloads'))[0].modelPath;
      assert.deepEqual(await callsOf(page, 'load_model').then((calls) => calls.map((c) => c.path)), [path]);
      await page.getByTestId('models-tab-library').click();
      await row(page, path).getByTestId('loaded-badge').waitFor();
      assert.equal(await text(row(page, path).getByTestId('model-source')), 'Hugging Face cache');
      assert.equal(await text(row(page, path).getByTestId('model-repo')), SMOL);
      assert.equal(await row(page, MODEL.path).getByTestId('loaded-badge').count(), 0);
      await page.getByTestId('close-models').click();
      await page.getByTestId('models-panel').waitFor({ state: 'detached' });
      await page.getByTestId('model-name').filter({ hasText: 'smollm2-135m-instruct-q8_0' }).waitFor();
      assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'composer');
    });
  });

  test('load progress is shown while a model loads', { timeout: TIMEOUT }, async () => {
    await withApp({ loadStepMs: 250 }, async (page) => {
      await openModels(page);
      const qwen = row(page, QWEN_05);
      await qwen.getByTestId('load-model').click();
      const bar = qwen.getByTestId('load-progress');
      await bar.waitFor();
      await page.waitForFunction(
        (path) => Number(document.querySelector(`[data-path="${path}"] [data-testid="load-progress"]`)?.getAttribute('aria-valuenow')) >= 35,
        QWEN_05,
      );
      assert.equal(await row(page, PHI).getByTestId('load-model').isDisabled(), true, 'one load at a time');
      await qwen.getByTestId('loaded-badge').waitFor();
      assert.equal(await qwen.getByTestId('load-progress').count(), 0);
    });
  });

  test('Cancel gives up a load under way; the model loaded before stays', { timeout: TIMEOUT }, async () => {
    await withApp({ loadStepMs: 250 }, async (page) => {
      await openModels(page);
      const qwen = row(page, QWEN_05);
      await qwen.getByTestId('load-model').click();
      await qwen.getByTestId('load-progress').waitFor();
      await shot(page, 'models-load-cancel', { dir: OUTPUT, mouse: [600, 700] });
      await qwen.getByTestId('cancel-load').click();
      const failed = qwen.getByTestId('load-error');
      await failed.waitFor();
      assert.match(await text(failed), new RegExp(`was cancelled; ${MODEL.name} is loaded again`));
      assert.equal(await qwen.getByTestId('load-progress').count(), 0);
      await row(page, MODEL.path).getByTestId('loaded-badge').waitFor();
      assert.deepEqual((await mockState(page)).calls.filter((c) => c.cmd === 'cancel_load').length, 1);
    });
  });

  test('a dropped connection is retried, counting down; a full disk fails in words; Retry; cancel asks first', { timeout: TIMEOUT }, async () => {
    await withApp({}, async (page) => {
      await openModels(page, 'discover');
      await search(page, 'smollm2');
      await openRepo(page, SMOL);
      await quant(page, SMOL, 'F16').getByTestId('download-quant').click();
      const f16 = downloadOf(page, 'F16');
      await stateOf(f16, 'retrying');
      assert.match(await text(f16.getByTestId('download-state')), /^Retrying in [12] s \(attempt 2 of 8\)…$/);
      await stateOf(f16, 'done');

      await page.getByTestId('models-tab-discover').click();
      await openRepo(page, SMOL_17);
      await quant(page, SMOL_17, 'Q8_0').getByTestId('download-quant').click();
      const q8 = downloadOf(page, 'Q8_0');
      await stateOf(q8, 'failed');
      assert.equal(await text(q8.getByTestId('download-state')), 'Failed');
      assert.equal(await text(q8.getByTestId('download-error-text')), `T${DISK_FULL.slice(1)}`);
      assert.equal(await q8.getByTestId('download-progress').getAttribute('aria-valuenow'), '50');
      assert.equal(await page.getByTestId('downloads-count').count(), 0, 'a failed download is not under way');
      await q8.getByTestId('retry-download').click();
      await stateOf(q8, 'done');

      // Cancel: asked first; Keep leaves it going, with the focus back on Cancel.
      await page.getByTestId('models-tab-discover').click();
      await quant(page, SMOL_17, 'Q4_K_M').getByTestId('download-quant').click();
      const q4 = downloadOf(page, 'Q4_K_M');
      await stateOf(q4, 'running');
      await q4.getByTestId('pause-download').click();
      await stateOf(q4, 'paused');
      await q4.getByTestId('cancel-download').click();
      assert.equal(await text(q4.getByTestId('inline-confirm').locator('.question')), 'Cancel and delete the partial file?');
      await q4.getByTestId('confirm-no').click();
      assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'cancel-download');
      await q4.getByTestId('cancel-download').click();
      await q4.getByTestId('confirm-yes').click();
      await stateOf(q4, 'cancelled');
      assert.equal(await text(q4.getByTestId('download-state')), 'Cancelled');
      assert.equal(await text(q4.getByTestId('download-detail')), 'The partial file was deleted.');
      assert.equal(await q4.getByTestId('pause-download').count(), 0);
      assert.equal((await callsOf(page, 'cancel_download')).length, 1);
    });
  });

  test('downloads the backend remembers are shown at start', { timeout: TIMEOUT }, async () => {
    await withApp({ downloads: rememberedDownloads() }, async (page) => {
      assert.equal(await text(page.getByTestId('models-downloading')), '4');
      await openModels(page, 'downloads');
      assert.deepEqual(await page.getByTestId('download').evaluateAll((els) => els.map((e) => e.dataset.state)), [
        'running', 'retrying', 'paused', 'verifying', 'failed', 'done',
      ]);
      assert.equal(await text(download(page, 'dl-old-1').getByTestId('download-detail')), '1.2 GB of 4.7 GB · 23.4 MB/s · 3 min left');
      assert.equal(await text(download(page, 'dl-old-4').getByTestId('download-state')), 'Verifying (checksum)…');
      assert.equal(await download(page, 'dl-old-4').getByTestId('pause-download').isDisabled(), true);
      assert.equal(await text(download(page, 'dl-old-5').getByTestId('download-error-text')), `T${DISK_FULL.slice(1)}`);
      assert.equal(await download(page, 'dl-old-6').getByTestId('load-downloaded').count(), 1);
      assert.deepEqual(await callsOf(page, 'watch_downloads').then((c) => c.length), 1);
    });
  });
});

describe('Gated repositories and the Hugging Face token', () => {
  test('hubAuth in words with "Add Hugging Face token"; a refused token; saved, the files load; forget', { timeout: TIMEOUT }, async () => {
    await withApp({}, async (page) => {
      await openModels(page, 'discover');
      assert.equal(await text(page.getByTestId('hub-token-storage')), 'No token saved: public models need none.');
      assert.equal(await page.getByTestId('forget-hub-token').count(), 0);
      await search(page, 'llama');
      await repo(page, GATED).getByTestId('gated-badge').waitFor();
      await openRepo(page, GATED);
      const refused = repo(page, GATED).getByTestId('repo-error');
      await refused.waitFor();
      assert.equal(await text(refused.getByTestId('repo-error-text')), GATED_MESSAGE);
      await refused.getByTestId('add-hub-token').click();
      await page.waitForFunction(() => document.activeElement?.dataset.testid === 'hub-token');

      await page.keyboard.type('hf_wrong');
      await page.keyboard.press('Enter');
      await page
        .getByTestId('hub-token-status')
        .filter({ hasText: 'Hugging Face refused the token (401 Unauthorized): check it at huggingface.co → Settings → Access Tokens' })
        .waitFor();
      await page.getByTestId('hub-token').fill('hf_AbCdEfGh12345');
      await page.getByTestId('save-hub-token').click();
      await page.getByTestId('hub-token-status').filter({ hasText: 'Token saved.' }).waitFor();
      assert.equal(await text(page.getByTestId('hub-token-storage')), 'Token saved in the system keychain.');
      assert.equal(await page.getByTestId('hub-token').inputValue(), '', 'a saved token is never shown again');
      // The repository that wanted it is read again.
      await quant(page, GATED, 'Q4_K_M').waitFor();
      assert.equal(await repo(page, GATED).getByTestId('repo-error').count(), 0);
      await checkFit(page, GATED, 'Q4_K_M', 'Fits in memory');

      await page.getByTestId('forget-hub-token').click();
      await page.getByTestId('hub-token-status').filter({ hasText: 'Token forgotten.' }).waitFor();
      assert.equal(await text(page.getByTestId('hub-token-storage')), 'No token saved: public models need none.');
      assert.deepEqual(await callsOf(page, 'set_hub_token'), [{ token: 'hf_wrong' }, { token: 'hf_AbCdEfGh12345' }, { token: null }]);
      assert.equal(await mock(page, 'hubToken'), null);

      // Without the token, the fit cannot read the header either: the same way out, the last verdict kept.
      const q4 = quant(page, GATED, 'Q4_K_M');
      await q4.getByTestId('check-fit').click();
      await q4.getByTestId('fit-error').filter({ hasText: `Could not check the fit: ${GATED_MESSAGE}` }).waitFor();
      assert.equal(await text(q4.getByTestId('fit-verdict')), 'Fits in memory');
      await q4.getByTestId('add-hub-token').click();
      await page.waitForFunction(() => document.activeElement?.dataset.testid === 'hub-token');
    });
  });

  test('no keychain: where the token goes is said plainly', { timeout: TIMEOUT }, async () => {
    await withApp({ hubTokenStorage: KEY_FILE }, async (page) => {
      await openModels(page, 'discover');
      const where = page.getByTestId('hub-token-storage');
      await where.filter({ hasText: 'No token saved' }).waitFor();
      await page.getByTestId('hub-token').fill('hf_AbCdEfGh12345');
      await page.getByTestId('save-hub-token').click();
      await where.filter({ hasText: 'No keychain answered' }).waitFor();
      assert.equal(await text(where), `No keychain answered: the token is saved in ${KEY_FILE.path} (readable only by you). ${KEY_FILE.reason}`);
    });
  });
});

describe('Library', () => {
  test('the files, their sources and facts; a broken one says why and cannot be loaded', { timeout: TIMEOUT }, async () => {
    await withApp({}, async (page) => {
      await openModels(page);
      await row(page, BROKEN).waitFor();
      const sources = await page.getByTestId('library-model').evaluateAll((els) =>
        els.map((e) => [e.dataset.path.split('/').at(-1), e.querySelector('[data-testid="model-source"]').textContent.trim()]),
      );
      assert.deepEqual(sources, [
        ['Llama-3.2-3B-Instruct-Q4_K_M.gguf', 'imported (linked)'],
        ['qwen2.5-0.5b-instruct-q8_0.gguf', 'Hugging Face cache'],
        ['Phi-3.5-mini-instruct-Q4_K_M.gguf', 'Hearth folder'],
        ['TinyStories-33M-F16.gguf', 'imported (copied)'],
        ['broken.gguf', 'Hearth folder'],
      ]);
      await row(page, MODEL.path).getByTestId('loaded-badge').waitFor();
      assert.equal(await row(page, MODEL.path).getByTestId('load-model').count(), 0);
      assert.equal(await row(page, MODEL.path).getByTestId('unload-model').count(), 1);
      assert.equal(await text(row(page, TINY).locator('[data-fact="hasChatTemplate"] dd')), 'no chat template');
      assert.equal(await text(row(page, TINY).locator('[data-fact="parameters"] dd')), '69M parameters');
      assert.equal(await text(row(page, QWEN_05).locator('[data-fact="hasChatTemplate"] dd')), 'chat template');
      assert.equal(await text(row(page, TINY).getByTestId('model-size')), '137.9 MB');
      // A message that starts with a file name keeps it as it is.
      assert.equal(await text(row(page, BROKEN).getByTestId('model-file-error')), BROKEN_ERROR);
      assert.equal(await row(page, BROKEN).getByTestId('load-model').count(), 0);
    });
  });

  test('load, a failed load keeps the loaded model, unload, reveal', { timeout: TIMEOUT }, async () => {
    await withApp({ loadFailures: { [PHI]: OUT_OF_MEMORY } }, async (page) => {
      await openModels(page);
      await row(page, QWEN_05).getByTestId('load-model').click();
      await row(page, QWEN_05).getByTestId('loaded-badge').waitFor();
      assert.equal(await row(page, MODEL.path).getByTestId('loaded-badge').count(), 0);

      await row(page, PHI).getByTestId('load-model').click();
      const failed = row(page, PHI).getByTestId('load-error');
      await failed.waitFor();
      assert.equal(await text(failed), `Not loaded: ${OUT_OF_MEMORY.message}`);
      assert.equal(await row(page, PHI).getByTestId('loaded-badge').count(), 0);
      await row(page, QWEN_05).getByTestId('loaded-badge').waitFor();
      assert.equal(await page.getByTestId('loaded-badge').count(), 1);
      assert.equal((await mock(page, 'model')).path, QWEN_05);

      await row(page, TINY).getByTestId('reveal-model').click();
      await page.waitForFunction((p) => window.__hearthMock.revealed.includes(p), TINY);

      await row(page, QWEN_05).getByTestId('unload-model').click();
      await row(page, QWEN_05).getByTestId('load-model').waitFor();
      assert.equal(await page.getByTestId('loaded-badge').count(), 0);
      await page.keyboard.press('Escape');
      await page.getByTestId('models-panel').waitFor({ state: 'detached' });
      await page.getByTestId('model-name').filter({ hasText: 'No model loaded' }).waitFor();
    });
  });

  test('the header follows a load: the new model, and the old one kept after a failure', { timeout: TIMEOUT }, async () => {
    await withApp({ loadFailures: { [PHI]: OUT_OF_MEMORY } }, async (page) => {
      await page.getByTestId('model-name').filter({ hasText: MODEL.name }).waitFor();
      await openModels(page);
      await row(page, PHI).getByTestId('load-model').click();
      await row(page, PHI).getByTestId('load-error').waitFor();
      await page.getByTestId('close-models').click();
      assert.equal(await text(page.getByTestId('model-name')), MODEL.name);
      await openModels(page);
      await row(page, TINY).getByTestId('load-model').click();
      await row(page, TINY).getByTestId('loaded-badge').waitFor();
      await page.getByTestId('close-models').click();
      await page.getByTestId('model-name').filter({ hasText: 'TinyStories-33M-F16' }).waitFor();
      assert.equal(await page.getByTestId('composer').getAttribute('placeholder'), 'Message TinyStories-33M-F16');
    });
  });

  test('delete asks first, with the size; a linked file is only removed from the library', { timeout: TIMEOUT }, async () => {
    await withApp({}, async (page) => {
      await openModels(page);
      const tiny = row(page, TINY);
      await tiny.getByTestId('delete-model').click();
      assert.equal(await text(tiny.getByTestId('inline-confirm').locator('.question')), 'Delete this model file (137.9 MB)?');
      await tiny.getByTestId('confirm-no').click();
      assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'delete-model');
      await tiny.getByTestId('delete-model').click();
      await tiny.getByTestId('confirm-yes').click();
      await tiny.waitFor({ state: 'detached' });
      assert.deepEqual(await callsOf(page, 'delete_model'), [{ path: TINY }]);

      const linked = row(page, MODEL.path);
      assert.equal(await text(linked.getByTestId('delete-model')), 'Remove');
      await linked.getByTestId('delete-model').click();
      assert.equal(await text(linked.getByTestId('inline-confirm').locator('.question')), 'Remove from library (the file stays)?');
      // Escape cancels the question, not the panel.
      await page.keyboard.press('Escape');
      await linked.getByTestId('delete-model').waitFor();
      await page.getByTestId('models-panel').waitFor();
    });
  });

  test('import: the dialog (link by default, or copy), a cancelled dialog, drops by hook and by Tauri events', { timeout: TIMEOUT }, async () => {
    await withApp({}, async (page) => {
      await openModels(page);
      await row(page, BROKEN).waitFor();
      assert.equal(await page.getByTestId('import-mode-link').isChecked(), true);
      await page.getByTestId('import-model').click();
      await page.getByTestId('import-notice').filter({ hasText: 'Imported gemma-2-2b-it-Q4_K_M.' }).waitFor();
      const gemma = row(page, '/home/me/Downloads/gemma-2-2b-it-Q4_K_M.gguf');
      assert.equal(await text(gemma.getByTestId('model-source')), 'imported (linked)');
      assert.deepEqual(await callsOf(page, 'import_model_dialog'), [{ mode: 'link' }]);

      // A cancelled dialog says nothing.
      await page.evaluate(() => (window.__hearthMock.importPick = null));
      await page.getByTestId('import-mode-copy').check();
      await page.getByTestId('import-model').click();
      await page.waitForFunction(() => window.__hearthMock.calls.filter((c) => c.cmd === 'import_model_dialog').length === 2);
      await page.getByTestId('import-notice').waitFor({ state: 'detached' });
      assert.deepEqual((await callsOf(page, 'import_model_dialog')).at(-1), { mode: 'copy' });

      // Dropped through the test hook: .gguf files are copied (the mode chosen), others are named and skipped.
      await page.evaluate(() => window.__hearthDropPaths(['/home/me/Downloads/Mistral-7B-Instruct-v0.3-Q4_K_M.gguf', '/home/me/notes.txt']));
      await page
        .getByTestId('import-notice')
        .filter({ hasText: 'Imported Mistral-7B-Instruct-v0.3-Q4_K_M. Only .gguf files can be imported: notes.txt was skipped.' })
        .waitFor();
      assert.deepEqual((await callsOf(page, 'import_model')).at(-1), { path: '/home/me/Downloads/Mistral-7B-Instruct-v0.3-Q4_K_M.gguf', mode: 'copy' });
      assert.equal(await text(row(page, `${MODELS_DIR}/Mistral-7B-Instruct-v0.3-Q4_K_M.gguf`).getByTestId('model-source')), 'imported (copied)');

      // Dropped on the window, as Tauri reports it: the overlay while dragging, then the import.
      await page.getByTestId('import-mode-link').check();
      await page.evaluate(() => window.__hearthMock.emit('tauri://drag-enter', { paths: ['/tmp/a.gguf'], position: { x: 800, y: 300 } }));
      const overlay = page.getByTestId('drop-overlay');
      await overlay.waitFor();
      assert.match(await text(overlay), /^Drop GGUF files to import/);
      await page.evaluate(() => window.__hearthMock.emit('tauri://drag-leave', null));
      await overlay.waitFor({ state: 'detached' });
      await page.evaluate(() => window.__hearthMock.emit('tauri://drag-enter', { paths: [], position: { x: 800, y: 300 } }));
      await overlay.waitFor();
      await page.evaluate(() =>
        window.__hearthMock.emit('tauri://drag-drop', { paths: ['/media/usb/Qwen3-4B-Q5_K_M.gguf', '/media/usb/not-a-model.gguf'], position: { x: 800, y: 300 } }),
      );
      await overlay.waitFor({ state: 'detached' });
      const notice = page.getByTestId('import-notice').filter({ hasText: 'Imported Qwen3-4B-Q5_K_M.' });
      await notice.waitFor();
      assert.match(await text(notice), /not-a-model\.gguf was not imported: not-a-model\.gguf is not a GGUF file/);
      assert.equal(await text(row(page, '/media/usb/Qwen3-4B-Q5_K_M.gguf').getByTestId('model-source')), 'imported (linked)');

      // While the drawer is open, the chat under it attaches nothing dropped.
      assert.deepEqual(await callsOf(page, 'attach_file'), []);

      // Closed, the library no longer takes drops: the chat attaches them to the message being typed.
      await page.getByTestId('close-models').click();
      await page.getByTestId('models-panel').waitFor({ state: 'detached' });
      const imports = (await callsOf(page, 'import_model')).length;
      await page.evaluate(() => window.__hearthDropPaths(['/home/me/notes.txt']));
      await page.getByTestId('composer-attachments').getByTestId('attachment').filter({ hasText: 'notes.txt' }).waitFor();
      assert.deepEqual((await callsOf(page, 'attach_file')).map((c) => c.path), ['/home/me/notes.txt']);
      assert.equal((await callsOf(page, 'import_model')).length, imports);
    });
  });
});

describe('Ways in, empty states, keyboard', () => {
  test('empty library, downloads and search; "Manage models…" in the model menu; tabs by arrow keys', { timeout: TIMEOUT }, async () => {
    await withApp({ library: [], model: null, hubRepos: [] }, async (page) => {
      await page.getByTestId('model-switcher').click();
      await page.getByTestId('manage-models').click();
      await page.getByTestId('model-menu').waitFor({ state: 'detached' });
      await page.getByTestId('models-tab-library').and(page.locator('[aria-selected="true"]')).waitFor();
      await page.getByTestId('library-empty').waitFor();
      assert.match(await text(page.getByTestId('library-empty')), /^No models yet\. Search Hugging Face in Discover, or import a GGUF file you already have\./);

      await page.getByTestId('models-tab-library').focus();
      await page.keyboard.press('ArrowRight');
      await page.getByTestId('models-tab-discover').and(page.locator('[aria-selected="true"]')).waitFor();
      assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'models-tab-discover');
      await page.keyboard.press('ArrowRight');
      await page.getByTestId('downloads-empty').waitFor();
      await page.keyboard.press('ArrowRight');
      await page.getByTestId('library-empty').waitFor();

      await page.getByTestId('models-tab-discover').click();
      await page.getByTestId('hub-search').fill('nothing like this');
      await page.getByTestId('hub-search').press('Enter');
      await page.getByTestId('hub-empty').filter({ hasText: 'No GGUF models match “nothing like this”' }).waitFor();

      // The panel remembers its tab; Escape closes it and the composer has the focus again.
      await page.keyboard.press('Escape');
      await page.getByTestId('models-panel').waitFor({ state: 'detached' });
      assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'composer');
      await page.getByTestId('open-models').click();
      await page.getByTestId('models-tab-discover').and(page.locator('[aria-selected="true"]')).waitFor();
      await page.getByTestId('hub-empty').filter({ hasText: 'nothing like this' }).waitFor();
    });
  });
});
