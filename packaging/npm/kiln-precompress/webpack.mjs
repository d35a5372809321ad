// webpack.mjs - kiln-precompress/webpack, the ESM entry point (for
// webpack.config.mjs): the plugin of webpack.js.
import KilnPlugin from './webpack.js';

export default KilnPlugin;
export { KilnPlugin };
