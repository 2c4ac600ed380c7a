// Render icons/source.svg to icons/source.png (1024x1024, transparent) with headless Chromium.
// Usage (from ui/): node scripts/render-icon.mjs
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('../../', import.meta.url));
const svg = await readFile(`${root}icons/source.svg`, 'utf8');
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1024, height: 1024 }, deviceScaleFactor: 1 });
  await page.setContent(
    `<html><body style="margin:0;background:transparent">${svg.replace('<svg ', '<svg style="display:block" ')}</body></html>`,
  );
  await page.screenshot({ path: `${root}icons/source.png`, omitBackground: true });
} finally {
  await browser.close();
}
