// The browser that `npm install` brings (@sparticuz/chromium), driven by playwright-core as the
// dashboard test drives a browser: on a machine without Debian's chromium, this is the one used,
// so it is checked here even where the system has its own.
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { packagedChromiumPath } from './chromiumPath.ts';

describe('the packaged headless Chromium', () => {
  it('unpacks from the installed package and runs a page\'s script', async () => {
    const executablePath = await packagedChromiumPath();
    expect(executablePath).not.toMatch(/^\/usr\//);
    const browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'], timeout: 30_000 });
    try {
      const page = await browser.newPage();
      await page.setContent('<p id="out">static</p><script>document.getElementById("out").textContent = "ran " + (6 * 7)</script>');
      expect(await page.textContent('#out')).toBe('ran 42');
    } finally {
      await browser.close();
    }
  }, 120_000);
});
