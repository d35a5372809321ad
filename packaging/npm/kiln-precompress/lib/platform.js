// platform.js - which kiln to run, for the `kiln` launcher (bin/kiln.js)
// and the JavaScript API (index.js) alike.
//
// The program is the file the KILN_BINARY environment variable names; else
// the native binary of the platform package npm installed as an optional
// dependency (kiln-precompress-linux-x64 on Linux x86-64,
// kiln-precompress-linux-arm64 on Linux arm64); else, where none is
// installed (macOS, Windows, or a native package left out), kiln built for
// WebAssembly (kiln-precompress-wasm32, installed everywhere), which the
// Node.js running this file runs.
'use strict';

const PLATFORMS = {
  'linux-x64': 'kiln-precompress-linux-x64',
  'linux-arm64': 'kiln-precompress-linux-arm64',
};
const WASM = 'kiln-precompress-wasm32';

// Thrown by findCommand() when there is nothing to run: .code is
// 'KILN_NO_PLATFORM' (no native binary is built for this platform, and the
// WebAssembly package is not installed) or 'KILN_NO_PACKAGE' (neither this
// platform's package nor the WebAssembly one is installed), .status 127
// (the launcher's exit status).
class NoBinaryError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'NoBinaryError';
    this.code = code;
    this.status = 127;
  }
}

function platformName() {
  return `${process.platform}-${process.arch}`;
}

function installed(file) {
  try {
    return require.resolve(file);
  } catch (e) {
    return null;
  }
}

// The kiln to run: { file, args, build }, to be spawned as FILE ARGS...
// KILN's-ARGUMENTS...; BUILD says which ('KILN_BINARY', 'native' or
// 'wasm32').  Throws a NoBinaryError when there is none.
function findCommand() {
  if (process.env.KILN_BINARY) {
    return { file: process.env.KILN_BINARY, args: [], build: 'KILN_BINARY' };
  }
  const platform = platformName();
  const pkg = PLATFORMS[platform];
  const native = pkg && installed(`${pkg}/bin/kiln`);
  if (native) {
    return { file: native, args: [], build: 'native' };
  }
  const wasm = installed(`${WASM}/kiln.js`);
  if (wasm) {
    return { file: process.execPath, args: [wasm], build: 'wasm32' };
  }
  if (!pkg) {
    throw new NoBinaryError('KILN_NO_PLATFORM',
      `kiln-precompress has no native kiln for ${platform} (only for ` +
      `${Object.keys(PLATFORMS).join(', ')}), and ${WASM}, which runs everywhere, is not installed ` +
      '(optional dependencies omitted?); reinstall without --omit=optional, or set KILN_BINARY to a kiln binary');
  }
  throw new NoBinaryError('KILN_NO_PACKAGE',
    `${pkg} is not installed, nor ${WASM} (optional dependencies omitted?); ` +
    'reinstall without --omit=optional, or set KILN_BINARY to a kiln binary');
}

// The file findCommand() runs kiln from: the binary, or the WebAssembly
// kiln's kiln.js.
function findBinary() {
  const c = findCommand();
  return c.args.length ? c.args[0] : c.file;
}

module.exports = { PLATFORMS, WASM, NoBinaryError, platformName, findCommand, findBinary };
