// index.js - kiln-precompress's JavaScript API (CommonJS; index.mjs is the
// ESM entry point, index.d.ts the declarations).
//
// precompress(dir, options) runs `kiln --json [OPTIONS] -- DIR...` with the
// kiln the launcher runs (lib/platform.js) and resolves to the summary
// kiln prints on stdout.  options are kiln's long options in camelCase:
// lib/options.json, generated from `kiln --help` when the package is packed
// (packaging/npm/gen-api.js), lists them.  Besides kiln's:
//   optional  when kiln has no binary for this platform, write one warning
//             and resolve to null instead of rejecting
//   log       called with each line kiln writes on stderr (default: the
//             line goes to process.stderr)
'use strict';

const { spawn } = require('child_process');
const path = require('path');
const { findCommand, NoBinaryError } = require('./lib/platform.js');
const KILN_OPTIONS = require('./lib/options.json');

const OWN_OPTIONS = { optional: 'boolean', log: 'function' };
const MAX_MESSAGE_LINES = 100;

function describe(v) {
  if (v === null) {
    return 'null';
  }
  return Array.isArray(v) ? 'an array' : `a ${typeof v}`;
}

function isArgument(v, numeric) {
  return typeof v === 'string' || (numeric && typeof v === 'number' && Number.isFinite(v));
}

// kiln's arguments for one option, or a TypeError's message.
function optionArgs(name, value) {
  const o = KILN_OPTIONS[name];
  const wanted = o.arg === null ? 'a boolean' :
    `${o.numeric ? 'a number or a string' : 'a string'}${o.repeatable ? ' (or an array of them)' : ''}`;
  const bad = `kiln-precompress: option ${name} (--${o.flag}) must be ${wanted}, not ${describe(value)}`;
  if (o.arg === null) {
    if (typeof value !== 'boolean') {
      throw new TypeError(bad);
    }
    if (value) {
      return [`--${o.flag}`];
    }
    return o.negation ? [`--${o.negation}`] : [];
  }
  const values = o.repeatable && Array.isArray(value) ? value : [value];
  if (!values.every((v) => isArgument(v, o.numeric))) {
    throw new TypeError(bad);
  }
  return values.map((v) => `--${o.flag}=${v}`);
}

// [kiln's arguments, the API's own options]; throws a TypeError on an
// unknown option or a value of the wrong type.
function parseOptions(options) {
  if (options === undefined || options === null) {
    options = {};
  }
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`kiln-precompress: options must be an object, not ${describe(options)}`);
  }
  const args = [];
  const own = {};
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined) {
      continue;
    }
    if (Object.prototype.hasOwnProperty.call(OWN_OPTIONS, name)) {
      if (typeof value !== OWN_OPTIONS[name]) {
        throw new TypeError(`kiln-precompress: option ${name} must be a ${OWN_OPTIONS[name]}, not ${describe(value)}`);
      }
      own[name] = value;
    } else if (Object.prototype.hasOwnProperty.call(KILN_OPTIONS, name)) {
      args.push(...optionArgs(name, value));
    } else {
      const guess = nearest(name);
      throw new TypeError(`kiln-precompress: unknown option ${name}` +
        `${guess ? ` (did you mean ${guess}?)` : ''}; the options are kiln's long options in camelCase (kiln --help)`);
    }
  }
  return [args, own];
}

// The known option nearest to a misspelled one (edit distance), if close.
function nearest(name) {
  const distance = (a, b) => {
    let row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const next = [i];
      for (let j = 1; j <= b.length; j++) {
        next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      }
      row = next;
    }
    return row[b.length];
  };
  let best = null;
  let bestDistance = 3;
  for (const known of [...Object.keys(KILN_OPTIONS), ...Object.keys(OWN_OPTIONS)]) {
    const d = distance(name.toLowerCase(), known.toLowerCase());
    if (d < bestDistance) {
      best = known;
      bestDistance = d;
    }
  }
  return best;
}

function parseDirs(dir) {
  const dirs = Array.isArray(dir) ? dir : [dir];
  if (dirs.length === 0 || !dirs.every((d) => typeof d === 'string' && d !== '')) {
    throw new TypeError(`kiln-precompress: dir must be a directory name or an array of them, not ${describe(dir)}`);
  }
  return dirs;
}

// Splits a stream into lines (a progress line's \r updates keep their last
// state) and calls each(line).
function lineSplitter(each) {
  let rest = '';
  const emit = (line) => {
    line = line.slice(line.lastIndexOf('\r') + 1);
    if (line !== '') {
      each(line);
    }
  };
  return {
    write(chunk) {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      lines.forEach(emit);
    },
    end() {
      emit(rest);
      rest = '';
    },
  };
}

function kilnError(message, fields) {
  const e = new Error(message);
  e.name = 'KilnError';
  Object.assign(e, { status: null, signal: null, errors: [], stderr: '' }, fields);
  return e;
}

function failure(binary, status, signal, stdout, stderrLines) {
  let summary;
  try {
    summary = JSON.parse(stdout);
  } catch (e) {
    summary = undefined;
  }
  const how = signal ? `was killed by ${signal}` : `exited with status ${status}`;
  let lines = stderrLines;
  if (lines.length > MAX_MESSAGE_LINES) {
    lines = [...lines.slice(0, MAX_MESSAGE_LINES), `... (${stderrLines.length - MAX_MESSAGE_LINES} more lines)`];
  }
  return kilnError([`kiln (${binary}) ${how}`, ...lines].join('\n'), {
    status: signal ? null : status,
    signal: signal || null,
    errors: summary && Array.isArray(summary.errors) ? summary.errors : [],
    summary,
    stderr: stderrLines.join('\n'),
  });
}

// P as COMMAND is to be given it.  The WebAssembly kiln (Emscripten) takes
// for absolute only a path that starts with '/': on Windows it is given the
// directories relative to the working directory (docs/install.md), as the
// plugins' absolute output and cache directories would not be found.
function forCommand(command, p) {
  if (command.build !== 'wasm32' || process.platform !== 'win32') {
    return p;
  }
  const r = path.relative(process.cwd(), p);
  return r === '' ? '.' : path.isAbsolute(r) ? p : r;
}

function precompress(dir, options) {
  const dirs = parseDirs(dir);
  const [args, own] = parseOptions(options);
  const log = own.log || ((line) => process.stderr.write(`${line}\n`));
  let command, binary;
  try {
    command = findCommand();
    binary = command.args.length ? command.args[0] : command.file;
  } catch (e) {
    if (!(e instanceof NoBinaryError)) {
      throw e;
    }
    if (own.optional && e.code === 'KILN_NO_PLATFORM') {
      log(`kiln: warning: ${e.message}; not precompressing ${dirs.join(', ')} (optional: true)`);
      return Promise.resolve(null);
    }
    return Promise.reject(kilnError(`kiln: ${e.message}`, { status: e.status }));
  }
  return new Promise((resolve, reject) => {
    const hostArgs = args.map((a) => (a.startsWith('--cache=') ? `--cache=${forCommand(command, a.slice(8))}` : a));
    const child = spawn(command.file, [...command.args, '--json', ...hostArgs, '--',
      ...dirs.map((d) => forCommand(command, d))], { stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout = [];
    const stderrLines = [];
    const stderr = lineSplitter((line) => {
      stderrLines.push(line);
      log(line);
    });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => stdout.push(d));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => stderr.write(d));
    child.on('error', (e) => {
      reject(kilnError(`kiln: ${binary}: ${e.message}`, { status: e.code === 'ENOENT' ? 127 : 126 }));
    });
    child.on('close', (status, signal) => {
      stderr.end();
      if (status !== 0) {
        reject(failure(binary, status, signal, stdout.join(''), stderrLines));
        return;
      }
      try {
        resolve(JSON.parse(stdout.join('')));
      } catch (e) {
        reject(kilnError(`kiln (${binary}) printed no JSON summary: ${e.message}`, { status, stderr: stderrLines.join('\n') }));
      }
    });
  });
}

module.exports = { precompress };
// For the bundler plugins (lib/plugin.js), which check their options when
// the plugin is made: not part of the API.
Object.defineProperty(module.exports, 'parseOptions', { value: parseOptions });
