// platform_preload.js - makes a Node process on the Linux build host look
// like one on another platform, for tests/package/npm_wasm.sh: loaded with
// `node --require` (or NODE_OPTIONS), it sets process.platform and
// process.arch to KILN_TEST_PLATFORM ("darwin-arm64", "win32-x64"), so
// that npm installs what it would install there (the WebAssembly package,
// no native one) and the launcher picks what it would pick.  The kiln it
// runs is a Node process too, with this preload: the WebAssembly kiln then
// takes itself for one on that platform, and applies its rules (lib/
// host.c: on win32 Windows's names and no mode bits, on darwin and win32
// names that differ only in case being one file) to Linux's files.
'use strict';

const wanted = process.env.KILN_TEST_PLATFORM || '';
const m = /^(darwin|win32)-(arm64|x64)$/.exec(wanted);
if (!m) {
  throw new Error(`platform_preload.js: KILN_TEST_PLATFORM is '${wanted}', not darwin-arm64, win32-x64 or the like`);
}
Object.defineProperty(process, 'platform', { value: m[1], enumerable: true });
Object.defineProperty(process, 'arch', { value: m[2], enumerable: true });
