// webpack.d.ts - kiln-precompress/webpack (CommonJS): the webpack plugin.
import type { KilnPluginOptions } from './index.js';
import type { KilnWebpackCompiler } from './lib/plugin-types.js';

/**
 * After webpack emits, kiln runs on output.path; its failure is one of the
 * compilation's errors.  The constructor throws a TypeError at once on an
 * option kiln does not have.
 */
declare class KilnPlugin {
  constructor(options?: KilnPluginOptions);
  apply(compiler: KilnWebpackCompiler): void;
}
declare namespace KilnPlugin {
  type Options = KilnPluginOptions;
}
export = KilnPlugin;
