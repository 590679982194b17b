// The examples keep working: each one runs to completion.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { ROOT } from './models.mjs';

for (const file of readdirSync(join(ROOT, 'examples')).filter((f) => f.endsWith('.mjs'))) {
  test(`examples/${file}`, () => {
    const out = execFileSync(process.execPath, [join(ROOT, 'examples', file)], { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
    assert.ok(out.length > 0);
  });
}
