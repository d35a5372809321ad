// rollup-plugin.js - the Vite and Rollup plugin (vite.js, rollup.js):
// kiln(options) runs kiln once on the output directory after the bundle is
// written.
//
// Vite (the plugin saw configResolved): the directory is the resolved
// build.outDir (the environment's, in Vite 6 and later), kiln's lines go to
// config.logger, the cache's root is config.root.  Rollup: the directories
// are the outputs' (output.dir, or the directory of output.file) of that
// build, lines go to this.info and this.warn, the root is the working
// directory.  Vite: writeBundle notes the directory, closeBundle runs kiln
// once, after every output is written (nothing written: nothing to do;
// a server-side bundle, vite build --ssr, is not precompressed).
// Rollup: writeBundle runs kiln on each output's directory (the Rollup
// command shows no warning given in closeBundle).  Each run gets the
// bundle's account of its chunks and assets (lib/account.js: which names
// hold Rollup's hash).  A kiln failure fails the build (this.error) with
// kiln's message.
'use strict';

const path = require('path');
const { settings, run } = require('./plugin.js');
const { rollupAccount } = require('./account.js');

const NAME = 'kiln';

function kiln(options) {
  const s = settings(options, 'kiln-precompress/vite');
  let config = null;
  let written = new Set();
  let account = {};

  // Where lines go from a hook whose plugin context is CONTEXT.
  function output(context) {
    if (config && config.logger) {
      return { info: (l) => config.logger.info(l), warn: (l) => config.logger.warn(l) };
    }
    const has = (f) => context && typeof context[f] === 'function';
    return {
      info: (l) => (has('info') ? context.info(l) : console.log(l)),
      warn: (l) => (has('warn') ? context.warn(l) : console.warn(l)),
    };
  }

  async function precompress(context, dirs, root, bundles) {
    try {
      await run(dirs, s, root, output(context), bundles);
    } catch (e) {
      if (context && typeof context.error === 'function') {
        context.error(e.message);
      }
      throw e;
    }
  }

  return {
    name: NAME,
    apply: 'build',
    enforce: 'post',
    configResolved(resolved) {
      config = resolved;
    },
    async writeBundle(outputOptions, bundle) {
      if (config) {
        const env = this && this.environment && this.environment.config;
        const build = env && env.build ? env.build : config.build;
        // a server-side bundle (vite build --ssr) is not sent to browsers
        if (build.ssr || (env && env.consumer === 'server')) {
          return;
        }
        written.add(path.resolve(config.root, build.outDir));
        rollupAccount(bundle, account);
        return;
      }
      let dir;
      if (outputOptions && outputOptions.dir) {
        dir = path.resolve(outputOptions.dir);
      } else if (outputOptions && outputOptions.file) {
        dir = path.dirname(path.resolve(outputOptions.file));
      } else {
        return;
      }
      await precompress(this, [dir], process.cwd(), rollupAccount(bundle));
    },
    async closeBundle() {
      if (written.size === 0) {
        return;
      }
      const dirs = [...written];
      const bundles = account;
      written = new Set();
      account = {};
      await precompress(this, dirs, config.root, bundles);
    },
  };
}

kiln.default = kiln;
kiln.kiln = kiln;
module.exports = kiln;
