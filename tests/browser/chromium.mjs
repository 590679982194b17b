// Headless Chromium for the browser tests: Debian's chromium (CHROMIUM_PATH
// overrides it) driven by playwright-core, each launch on its own profile.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// nothing but the pages' own requests: no QUIC, updates, sync or first-run work
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A new profile folder (the caller removes it) named after prefix. */
export const newProfile = (prefix = 'onnx-light-chromium-') => mkdtempSync(join(tmpdir(), prefix));

/** Launches a persistent context on profile; options are playwright's (viewport, ...). */
export function launchChromium(profile, options = {}) {
  return chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, ...options });
}
