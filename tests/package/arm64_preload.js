// arm64_preload.js - makes a Node process on an x86-64 build host behave as
// one on Linux arm64, for tests/package/npm_arm64.sh: loaded with
// `node --require` (or NODE_OPTIONS), it sets process.arch to 'arm64', so
// npm installs the arm64 platform package and the launcher picks it, and it
// runs every aarch64 ELF program that child_process starts through the
// qemu-user emulator KILN_TEST_QEMU names, as an arm64 kernel would run it
// directly.  Any other program is started unchanged.
'use strict';

const childProcess = require('child_process');
const fs = require('fs');

Object.defineProperty(process, 'arch', { value: 'arm64', enumerable: true });

const qemu = process.env.KILN_TEST_QEMU;
const EM_AARCH64 = 183;

function isAarch64(file) {
  const head = Buffer.alloc(20);
  let fd;
  try {
    fd = fs.openSync(file, 'r');
    if (fs.readSync(fd, head, 0, 20, 0) < 20) {
      return false;
    }
  } catch (e) {
    return false;
  } finally {
    if (fd !== undefined) {
      fs.closeSync(fd);
    }
  }
  return head.readUInt32BE(0) === 0x7f454c46 && head.readUInt16LE(18) === EM_AARCH64;
}

const spawn = childProcess.spawn;
childProcess.spawn = function (file, args, options) {
  if (qemu && typeof file === 'string' && isAarch64(file)) {
    if (!Array.isArray(args)) {
      options = args;
      args = [];
    }
    return spawn.call(this, qemu, [file, ...args], options);
  }
  return spawn.apply(this, arguments);
};
