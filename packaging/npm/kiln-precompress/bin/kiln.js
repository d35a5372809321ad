#!/usr/bin/env node
// kiln.js - the `kiln` command of the kiln-precompress npm package.
//
// kiln is a native program; this launcher only finds it (lib/platform.js:
// the file the KILN_BINARY environment variable names, the binary of the
// platform package npm installed as an optional dependency, or else kiln
// built for WebAssembly, which this Node.js runs) and runs it.
// kiln gets the launcher's arguments, environment, stdin, stdout and stderr.
// The launcher exits with kiln's status, or dies of the signal that killed
// kiln; SIGINT, SIGTERM and SIGHUP sent to the launcher alone are passed on
// to kiln, which removes its temporary files and dies of them.  When there
// is no binary to run, the launcher says why and exits 127 (126 when the
// file cannot be executed).
'use strict';

const { spawn } = require('child_process');
const os = require('os');
const { findCommand, NoBinaryError } = require('../lib/platform.js');

const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function fail(status, message) {
  process.stderr.write(`kiln: ${message}\n`);
  process.exit(status);
}

function run() {
  let command;
  try {
    command = findCommand();
  } catch (e) {
    if (!(e instanceof NoBinaryError)) {
      throw e;
    }
    fail(e.status, e.message);
  }
  const child = spawn(command.file, [...command.args, ...process.argv.slice(2)], { stdio: 'inherit' });
  const handlers = new Map();

  for (const sig of FORWARDED) {
    const handler = () => child.kill(sig);
    handlers.set(sig, handler);
    process.on(sig, handler);
  }
  child.on('error', (e) => {
    fail(e.code === 'ENOENT' ? 127 : 126, `${command.file}: ${e.message}`);
  });
  child.on('exit', (status, signal) => {
    for (const [sig, handler] of handlers) {
      process.removeListener(sig, handler);
    }
    if (signal === null) {
      process.exit(status);
    }
    // Die of the same signal, as a shell would see kiln die.  Node keeps
    // some signals for itself (SIGUSR1 starts its inspector), so if this
    // process is still alive shortly after, exit the way a shell reports it.
    process.kill(process.pid, signal);
    setTimeout(() => process.exit(128 + (os.constants.signals[signal] || 0)), 1000);
  });
}

run();
