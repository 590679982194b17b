// Entry for Node.js ("node" export condition).
import * as platform from './platform-node.js';
import { setPlatform } from './runtime.js';

setPlatform(platform);

export * from './index.js';
