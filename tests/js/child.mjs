// Runs an ES module snippet in a fresh Node process (a fresh wasm module),
// from the repository root so `import ... from 'onnx-light'` resolves to dist/.
import { execFileSync } from 'node:child_process';

import { ROOT } from './models.mjs';

/** stdout of `node --input-type=module -e code` (throws on a non-zero exit). */
export function runModule(code, nodeArgs = []) {
  return execFileSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', code], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
