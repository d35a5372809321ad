// rollup.mjs - kiln-precompress/rollup, the ESM entry point: the plugin of
// lib/rollup-plugin.js.
import kiln from './lib/rollup-plugin.js';

export default kiln;
export { kiln };
