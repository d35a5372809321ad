// webpack.js - kiln-precompress/webpack: the webpack plugin, CommonJS
// (webpack.mjs is the ESM entry point).
//
//   const KilnPlugin = require('kiln-precompress/webpack');
//   module.exports = { plugins: [new KilnPlugin({ brotli: true })] };
//
// After webpack has emitted its files (compiler.hooks.afterEmit), it runs
// kiln on the output directory (output.path): kiln's summary line goes to
// the infrastructure logger ('kiln'), its warnings (and optional's) into
// compilation.warnings, a failure into compilation.errors with kiln's
// message.  The cache's root is the compiler's context.  kiln gets
// webpack's own account of the assets it emitted (lib/account.js: which
// are immutable, with their content hashes).  The options are those of
// lib/plugin.js.  Not in watch mode (webpack --watch, webpack
// serve, whose dev server emits to memory): only a build writes what a
// server will send.
'use strict';

const { settings, run } = require('./lib/plugin.js');
const { webpackAccount } = require('./lib/account.js');

const NAME = 'KilnPlugin';

class KilnPlugin {
  constructor(options) {
    this.settings = settings(options, 'kiln-precompress/webpack');
  }

  apply(compiler) {
    const logger = compiler.getInfrastructureLogger('kiln');
    const WebpackError = (compiler.webpack && compiler.webpack.WebpackError) || Error;
    const problem = (message) => {
      const e = new WebpackError(message);
      e.name = 'KilnError';
      e.hideStack = true;
      return e;
    };
    compiler.hooks.afterEmit.tapPromise(NAME, async (compilation) => {
      const dir = compilation.outputOptions.path || compiler.outputPath;
      if (compiler.watchMode) {
        logger.info('kiln: not run in watch mode (webpack --watch, webpack serve): build to precompress');
        return;
      }
      try {
        await run([dir], this.settings, compiler.context, {
          info: (l) => logger.info(l),
          warn: (l) => compilation.warnings.push(problem(l)),
        }, webpackAccount(compilation.getAssets()));
      } catch (e) {
        compilation.errors.push(problem(e.message));
      }
    });
  }
}

KilnPlugin.default = KilnPlugin;
KilnPlugin.KilnPlugin = KilnPlugin;
module.exports = KilnPlugin;
