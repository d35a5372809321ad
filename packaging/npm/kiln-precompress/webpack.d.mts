// webpack.d.mts - kiln-precompress/webpack (ESM): the webpack plugin.
import type { KilnPluginOptions } from './index.mjs';
import type { KilnWebpackCompiler } from './lib/plugin-types.js';

export type { KilnPluginOptions };

/**
 * After webpack emits, kiln runs on output.path; its failure is one of the
 * compilation's errors.  The constructor throws a TypeError at once on an
 * option kiln does not have.
 */
export default class KilnPlugin {
  constructor(options?: KilnPluginOptions);
  apply(compiler: KilnWebpackCompiler): void;
}
export { KilnPlugin };
