// rollup.d.ts - kiln-precompress/rollup (CommonJS): the Vite and Rollup plugin.
import type { KilnPluginOptions } from './index.js';
import type { KilnVitePlugin } from './lib/plugin-types.js';

/**
 * The plugin: after the bundle is written, kiln runs once on the output
 * directory (Vite: build.outDir; Rollup: each output's directory).  Throws a
 * TypeError at once on an option kiln does not have.
 */
declare function kiln(options?: KilnPluginOptions): KilnVitePlugin;
declare namespace kiln {
  type Options = KilnPluginOptions;
  type Plugin = KilnVitePlugin;
}
export = kiln;
