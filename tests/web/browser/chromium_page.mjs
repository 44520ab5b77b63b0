// One headless Debian Chromium (playwright-core) for a dashboard test: a
// fresh profile directory per run, a page whose errors and console errors
// are collected (a test ends by asserting there were none), and close(),
// which removes the profile.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export async function openPage() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'fibnic-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const errors = [];
  const close = async () => {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  };
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => errors.push('page error: ' + e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
    return { page, errors, close };
  } catch (e) {
    await close();
    throw e;
  }
}
