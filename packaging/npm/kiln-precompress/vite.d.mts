// vite.d.mts - kiln-precompress/vite (ESM): the Vite and Rollup plugin.
import type { KilnPluginOptions } from './index.mjs';
import type { KilnVitePlugin } from './lib/plugin-types.js';

export type { KilnPluginOptions, KilnVitePlugin };

/**
 * The plugin: after the bundle is written, kiln runs once on the output
 * directory (Vite: build.outDir; Rollup: each output's directory).  Throws a
 * TypeError at once on an option kiln does not have.
 */
export default function kiln(options?: KilnPluginOptions): KilnVitePlugin;
export { kiln };
