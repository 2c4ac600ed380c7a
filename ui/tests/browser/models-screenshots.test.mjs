// Browser tests of the model manager, continued: a vision model's quantizations (its projector comes with it),
// and screenshots of discover, the fit, downloads and the library in light and dark.
// Run with `npm run test:browser`; screenshots go to tests/browser/output/.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BROKEN, OUTPUT, PHI, TIMEOUT, TINY, inBothSchemes, shot, useBrowser, withApp } from './harness.mjs';
import { QWEN, VISION, callsOf, checkFit, download, openModels, openRepo, quant, rememberedDownloads, repo, row, search, text } from './models-helpers.mjs';

useBrowser();

describe('Discover: a vision model', () => {
  test('each quantization says its projector comes with it, and the download asks for the model alone', { timeout: TIMEOUT }, async () => {
    await withApp({}, async (page) => {
      await openModels(page, 'discover');
      await search(page, 'smolvlm');
      await openRepo(page, VISION);
      const q8 = quant(page, VISION, 'Q8_0');
      assert.equal(await text(q8.getByTestId('quant-projector')), 'with image projector');
      assert.match(await q8.getByTestId('quant-projector').getAttribute('title'), /mmproj-SmolVLM-256M-Instruct-f16\.gguf/);
      assert.equal(await text(q8.getByTestId('quant-size')), '365.1 MB', 'the projector is in the size');
      assert.equal(await quant(page, QWEN, 'Q4_K_M').getByTestId('quant-projector').count(), 0);
      await shot(page, 'models-vision-quant', { dir: OUTPUT, mouse: [300, 700] });
      // Rust adds the projector to the download: the window asks for the model's files.
      await q8.getByTestId('download-quant').click();
      assert.deepEqual((await callsOf(page, 'start_download')).at(-1), { repo: VISION, quant: 'Q8_0', files: ['SmolVLM-256M-Instruct-Q8_0.gguf'] });
    });
  });
});

describe('Screenshots', () => {
  const options = (mouse = [300, 700]) => ({ dir: OUTPUT, mouse });

  test('discover, fit, downloads, library (light and dark)', { timeout: 4 * TIMEOUT }, async () => {
    await inBothSchemes({ freeRamBytes: 3.5e9 }, async (page) => {
      await openModels(page, 'discover');
      await search(page, 'instruct');
      await shot(page, `models-discover`, options());

      await openRepo(page, QWEN);
      await checkFit(page, QWEN, 'Q2_K', 'Fits in memory');
      await checkFit(page, QWEN, 'Q4_K_M', 'Fits with 24 of 28 layers on GPU');
      await checkFit(page, QWEN, 'Q8_0', 'Too large for this machine');
      await repo(page, QWEN).evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await shot(page, `models-fit`, options());
    });

    await inBothSchemes({ downloads: rememberedDownloads() }, async (page) => {
      await openModels(page, 'downloads');
      await download(page, 'dl-old-6').waitFor();
      await shot(page, `models-downloads`, options());
    });

    await inBothSchemes({ loadStepMs: 2000 }, async (page) => {
      await openModels(page);
      await row(page, BROKEN).waitFor();
      await row(page, PHI).getByTestId('load-model').click();
      await page.waitForFunction(
        (path) => Number(document.querySelector(`[data-path="${path}"] [data-testid="load-progress"]`)?.getAttribute('aria-valuenow')) >= 15,
        PHI,
      );
      await shot(page, `models-library`, options());
      await row(page, TINY).scrollIntoViewIfNeeded();
      await row(page, BROKEN).scrollIntoViewIfNeeded();
      await shot(page, `models-library-end`, options());
    });
  });
});
