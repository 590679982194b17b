// Entry for browsers and workers ("browser"/"default" export conditions);
// bundled with the Emscripten glue into dist/browser.js.
import * as platform from './platform-browser.js';
import { setPlatform } from './runtime.js';

setPlatform(platform);

export * from './index.js';
