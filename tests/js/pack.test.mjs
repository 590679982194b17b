// `npm pack`, install the tarball into an empty folder, and run a model
// through `import { InferenceSession, Tensor } from 'onnx-light'` there.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { ROOT, identityModel } from './models.mjs';

test('the packed package installs and runs a model in an empty folder', { timeout: 180_000 }, (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'onnx-light-pack-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: 'pipe' });
  const tarball = npm(['pack', '--silent', '--pack-destination', dir], ROOT).trim().split('\n').pop();
  writeFileSync(join(dir, 'package.json'), '{ "name": "consumer", "private": true, "type": "module" }\n');
  npm(['install', '--prefer-offline', '--no-audit', '--no-fund', `./${tarball}`], dir);
  writeFileSync(join(dir, 'model.onnx'), identityModel());
  writeFileSync(
    join(dir, 'main.js'),
    `import { InferenceSession, Tensor } from 'onnx-light';
     const session = await InferenceSession.create('model.onnx');
     const { y } = await session.run({ x: new Tensor('float32', [1, 2, 3], [3]) });
     console.log(Array.from(y.data).join(','));`,
  );
  assert.equal(execFileSync(process.execPath, ['main.js'], { cwd: dir, encoding: 'utf8' }).trim(), '1,2,3');
});
