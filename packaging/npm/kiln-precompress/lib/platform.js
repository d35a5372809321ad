// platform.js - where the kiln binary is, for the `kiln` launcher
// (bin/kiln.js) and the JavaScript API (index.js) alike.
//
// The binary is the file the KILN_BINARY environment variable names, or the
// one in the platform package npm installed as an optional dependency
// (kiln-precompress-linux-x64 on Linux x86-64, kiln-precompress-linux-arm64
// on Linux arm64).
'use strict';

const PLATFORMS = {
  'linux-x64': 'kiln-precompress-linux-x64',
  'linux-arm64': 'kiln-precompress-linux-arm64',
};

// Thrown by findBinary() when there is nothing to run: .code is
// 'KILN_NO_PLATFORM' (no binary is built for this platform) or
// 'KILN_NO_PACKAGE' (the platform package is not installed), .status 127
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

function findBinary() {
  if (process.env.KILN_BINARY) {
    return process.env.KILN_BINARY;
  }
  const platform = platformName();
  const pkg = PLATFORMS[platform];
  if (!pkg) {
    throw new NoBinaryError('KILN_NO_PLATFORM',
      `kiln-precompress has no kiln binary for ${platform} (only for ` +
      `${Object.keys(PLATFORMS).join(', ')}); build kiln from source and set KILN_BINARY to it`);
  }
  try {
    return require.resolve(`${pkg}/bin/kiln`);
  } catch (e) {
    throw new NoBinaryError('KILN_NO_PACKAGE',
      `${pkg} is not installed (optional dependencies omitted?); ` +
      'reinstall without --omit=optional, or set KILN_BINARY to a kiln binary');
  }
}

module.exports = { PLATFORMS, NoBinaryError, platformName, findBinary };
