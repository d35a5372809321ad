// casefold_preload.js - makes Node's file system, below the directory
// KILN_TEST_CASEFOLD_ROOT, behave as macOS's and Windows's usual ones do:
// case-insensitive and case-preserving.  Loaded with `node --require` (or
// NODE_OPTIONS) beside platform_preload.js, for the tests of lib/host.c's
// rule that a name the directory holds under another spelling is another
// file's (tests/unit/test_host.c under Node, tests/package/npm_wasm.sh):
// Linux's file systems keep "app.js.gz" and "APP.JS.GZ" apart, so without
// this the rule would never be met on the build host.
//
// Each path given to the fs module's synchronous calls (those Emscripten's
// NODERAWFS and packaging/wasm/host.js make) is looked up a component at a
// time: a component the directory does not hold as it is written, but
// holds under another case, is replaced by the name the directory holds,
// as the file system would find it.  A name held by no spelling is left as
// it is (a file created takes the case it is given).  Listings are the
// directory's, names as they were created.
'use strict';

const fs = require('fs');
const path = require('path');

const root = process.env.KILN_TEST_CASEFOLD_ROOT;
if (!root) {
  throw new Error('casefold_preload.js: KILN_TEST_CASEFOLD_ROOT names no directory');
}
const top = path.resolve(root);
const readdir = fs.readdirSync;

// P as the case-folding file system finds it.
function fold(p) {
  if (typeof p !== 'string') {
    return p;
  }
  const full = path.resolve(p);
  if (full !== top && !full.startsWith(top + path.sep)) {
    return p;
  }
  let dir = top;
  for (const part of full.slice(top.length).split(path.sep).filter((s) => s !== '')) {
    let names;
    try {
      names = readdir(dir);
    } catch (e) {
      names = [];
    }
    const want = part.toLowerCase();
    const held = names.includes(part) ? part : names.find((n) => n.toLowerCase() === want);
    dir = path.join(dir, held === undefined ? part : held);
  }
  return dir;
}

// The calls whose first argument is a path, and those whose first two are.
const one = ['openSync', 'statSync', 'lstatSync', 'readdirSync', 'unlinkSync', 'rmdirSync',
  'mkdirSync', 'utimesSync', 'lutimesSync', 'chmodSync', 'readlinkSync', 'truncateSync',
  'existsSync', 'accessSync', 'realpathSync', 'opendirSync', 'readFileSync', 'writeFileSync'];
const two = ['renameSync', 'linkSync'];
for (const name of one) {
  const real = fs[name];
  fs[name] = function (p, ...rest) { return real.call(this, fold(p), ...rest); };
}
for (const name of two) {
  const real = fs[name];
  fs[name] = function (a, b, ...rest) { return real.call(this, fold(a), fold(b), ...rest); };
}
{
  // symlinkSync(target, path): the link's own path only
  const real = fs.symlinkSync;
  fs.symlinkSync = function (target, p, ...rest) { return real.call(this, target, fold(p), ...rest); };
}
