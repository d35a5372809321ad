// plugin-types.d.ts - what the plugins' declarations (vite.d.ts,
// rollup.d.ts, webpack.d.ts and their .d.mts) share: the plugin objects, as
// much of each bundler as they use (this package depends on no bundler's
// types; Vite's, Rollup's and webpack's own are assignable to these).

/** The parts of Vite's resolved config the plugin reads. */
export interface KilnViteConfig {
  root: string;
  build: { outDir: string };
  logger: { info(msg: string): void; warn(msg: string): void };
}

/** The parts of Rollup's output options the plugin reads. */
export interface KilnRollupOutputOptions {
  dir?: string;
  file?: string;
}

/** What kiln() returns: a Vite plugin (build only) that is a Rollup plugin too. */
export interface KilnVitePlugin {
  name: 'kiln';
  apply: 'build';
  enforce: 'post';
  configResolved(config: KilnViteConfig): void;
  writeBundle(options: KilnRollupOutputOptions): Promise<void>;
  closeBundle(): Promise<void>;
}

/** The parts of a webpack compiler the plugin uses. */
export interface KilnWebpackCompiler {
  context: string;
  hooks: { afterEmit: unknown };
  getInfrastructureLogger(name: string): unknown;
}
