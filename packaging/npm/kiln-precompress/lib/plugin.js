// plugin.js - what the bundler plugins (vite.js/rollup.js, webpack.js)
// share: their options and one precompress() run on an output directory,
// kiln's lines sent to the bundler's logger.
//
// A plugin's options are precompress()'s (kiln's long options in camelCase,
// optional) but log, and:
//   cache      the content cache: by default node_modules/.cache/kiln under
//              the project's root (bundlers empty their output directory on
//              every build: without a cache every build encodes everything
//              again); a path (relative to the root); false for none
//   onSummary  called with kiln's JSON summary after each run
// The plugins pass kiln the bundler's own account of the files it hashed
// (lib/account.js): kiln needs no guess about their names.
'use strict';

const path = require('path');
const api = require('../index.js');
const { withAccount } = require('./account.js');

const DEFAULT_CACHE = path.join('node_modules', '.cache', 'kiln');
const SUMMARY_LINE = /^kiln: [0-9]+ assets?\b/;
const WARNING_LINE = /^kiln: (?:.*: )?warning: /;

function describe(v) {
  if (v === null) {
    return 'null';
  }
  return Array.isArray(v) ? 'an array' : `a ${typeof v}`;
}

// The plugin's settings from its options; throws a TypeError (when the
// plugin is made, before any build) on an option precompress() would refuse.
function settings(options, plugin) {
  if (options === undefined || options === null) {
    options = {};
  }
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${plugin}: options must be an object, not ${describe(options)}`);
  }
  const { cache, onSummary, log, ...kiln } = options;
  if (log !== undefined) {
    throw new TypeError(`${plugin}: option log is precompress()'s: the plugin writes kiln's lines through the bundler's logger`);
  }
  if (cache !== undefined && typeof cache !== 'boolean' && !(typeof cache === 'string' && cache !== '')) {
    throw new TypeError(`${plugin}: option cache must be a directory name, true (the default: ${DEFAULT_CACHE}) or false, not ${describe(cache)}`);
  }
  if (onSummary !== undefined && typeof onSummary !== 'function') {
    throw new TypeError(`${plugin}: option onSummary must be a function, not ${describe(onSummary)}`);
  }
  try {
    api.parseOptions(kiln);
  } catch (e) {
    throw new TypeError(e.message.replace(/^kiln-precompress:/, `${plugin}:`));
  }
  return { kiln, cache: cache === undefined ? true : cache, onSummary };
}

// The cache directory for a project whose root is ROOT, or null for none.
function cacheDir(s, root) {
  if (s.cache === false) {
    return null;
  }
  return path.resolve(root, s.cache === true ? DEFAULT_CACHE : s.cache);
}

// Runs kiln on DIRS (refused when one of them is ROOT or holds it: an
// output.file in the project's root would have kiln compress the whole
// project): kiln's summary line (and, with verbose, its other
// lines) goes to out.info, each warning to out.warn.  ACCOUNT, when given,
// is the bundler's own account of its outputs (lib/account.js), passed to
// kiln with --fingerprints beside the user's.  Resolves to the
// summary (null when optional and there is no binary for the platform);
// rejects with precompress()'s error, whose message has kiln's lines.
async function run(dirs, s, root, out, account) {
  if (account) {
    return withAccount(account, (file) => run(dirs, {
      ...s,
      kiln: { ...s.kiln, fingerprints: [].concat(s.kiln.fingerprints || [], file) },
    }, root, out));
  }
  for (const dir of dirs) {
    const up = path.relative(dir, root);
    if (up === '' || (!up.startsWith('..') && !path.isAbsolute(up))) {
      throw new Error(`kiln-precompress: the output directory ${dir} holds the project (${root}): ` +
        'kiln would compress all of it; write the bundle into a directory of its own');
    }
  }
  const held = [];
  const options = { ...s.kiln };
  const cache = cacheDir(s, root);
  if (cache !== null) {
    options.cache = cache;
  }
  // artifacts, like the cache, from the project's root, and made on the
  // first build (kiln itself takes only an existing directory)
  if (typeof options.artifacts === 'string' && options.artifacts !== '') {
    options.artifacts = path.resolve(root, options.artifacts);
    require('fs').mkdirSync(options.artifacts, { recursive: true });
  }
  options.log = (line) => {
    if (WARNING_LINE.test(line)) {
      out.warn(line);
    } else if (SUMMARY_LINE.test(line)) {
      out.info(line);
    } else {
      held.push(line); // an error's line (in the rejection's message) or -v's
    }
  };
  const summary = await api.precompress(dirs, options);
  held.forEach((line) => out.info(line));
  if (summary !== null && s.onSummary) {
    s.onSummary(summary);
  }
  return summary;
}

module.exports = { DEFAULT_CACHE, settings, cacheDir, run };
