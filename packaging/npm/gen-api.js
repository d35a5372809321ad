#!/usr/bin/env node
// gen-api.js - the option list of kiln-precompress's JavaScript API and its
// TypeScript declarations, from `kiln --help` of the binary being packed.
//
// usage: node gen-api.js KILN PACKAGE_DIR
// writes PACKAGE_DIR/lib/options.json (what index.js checks options
// against), PACKAGE_DIR/index.d.ts (CommonJS) and PACKAGE_DIR/index.d.mts
// (ESM), which the plugins' declarations (vite.d.ts, webpack.d.ts, ...)
// take KilnPluginOptions from.  Run by pack.sh.
//
// Every long option of `kiln --help` becomes a camelCase option
// (--gzip-level N: gzipLevel), but --help, --version and --json (the API
// always passes --json; it prints nothing else).  An option without an
// argument is a flag (boolean); one whose argument is N or R (sizes with
// K/M/G suffixes, ratios) takes a number or a string, any other a string;
// one whose description says "repeatable" also takes an array.
'use strict';

const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const SKIPPED = new Set(['help', 'version', 'json']);
const NUMERIC = new Set(['N', 'R']);

function die(message) {
  process.stderr.write(`gen-api.js: ${message}\n`);
  process.exit(1);
}

function camel(name) {
  return name.replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase());
}

// The options of `kiln --help`: [{ flag, arg, description }], the
// description joined from its continuation lines.
function parseHelp(help) {
  // "  -j, --jobs N   text" or "      --brotli   text"; a description's
  // continuation lines are indented further (and may start with --).
  const optionLine = /^(?: {2}-[A-Za-z0-9], | {6})--([a-z0-9][a-z0-9-]*)(?: ([A-Z][A-Z0-9/_]*))?(?: {2,}(\S.*))?$/;
  const options = [];
  let current = null;
  for (const line of help.split('\n')) {
    const m = optionLine.exec(line);
    if (m) {
      current = { flag: m[1], arg: m[2] || null, description: m[3] || '' };
      options.push(current);
    } else if (current && /^ {2,}\S/.test(line)) {
      current.description = `${current.description} ${line.trim()}`.trim();
    } else {
      current = null;
    }
  }
  return options;
}

function optionTable(help) {
  const table = {};
  for (const o of parseHelp(help)) {
    if (SKIPPED.has(o.flag)) {
      continue;
    }
    const name = camel(o.flag);
    if (table[name]) {
      die(`--${o.flag}: listed twice in kiln --help`);
    }
    table[name] = {
      flag: o.flag,
      arg: o.arg,
      numeric: o.arg !== null && NUMERIC.has(o.arg),
      repeatable: o.arg !== null && /\brepeatable\b/.test(o.description),
      description: o.description,
    };
  }
  // A flag with a --no-FLAG beside it: FLAG: false passes --no-FLAG.
  for (const o of Object.values(table)) {
    if (o.arg === null && table[camel(`no-${o.flag}`)]) {
      o.negation = `no-${o.flag}`;
    }
  }
  for (const need of ['brotli', 'gzipLevel', 'exclude', 'previous', 'cache']) {
    if (!table[need]) {
      die(`kiln --help lists no option ${need}: is its format still the one this script reads?`);
    }
  }
  return table;
}

function tsType(o) {
  if (o.arg === null) {
    return 'boolean';
  }
  const one = o.numeric ? 'number | string' : 'string';
  return o.repeatable ? `${one} | ReadonlyArray<${one}>` : one;
}

function comment(text) {
  return text.replace(/\*\//g, '*\\/');
}

function declarations(table, version) {
  const fields = Object.entries(table).map(([name, o]) => {
    const usage = `\`--${o.flag}${o.arg ? ` ${o.arg}` : ''}\``;
    const more = o.negation ? ` (\`false\`: \`--${o.negation}\`)` : '';
    return `  /** ${usage}${more}: ${comment(o.description)} */\n  ${name}?: ${tsType(o)};`;
  });
  return `// kiln-precompress ${version}: generated from \`kiln --help\` by gen-api.js.

/** kiln's long options, in camelCase (\`kiln --help\`). */
export interface KilnOptions {
${fields.join('\n')}
}

/** The options of precompress(): kiln's, and the API's own. */
export interface PrecompressOptions extends KilnOptions {
  /** When kiln has no binary for this platform, print one warning and resolve to null. */
  optional?: boolean;
  /** Called with each line kiln writes on stderr (default: written to process.stderr). */
  log?: (line: string) => void;
}

/**
 * The options of the bundler plugins (kiln-precompress/vite, /rollup,
 * /webpack): kiln's, optional, and the plugins' own.
 */
export interface KilnPluginOptions extends Omit<KilnOptions, 'cache'> {
  /**
   * The content cache kept between builds: \`true\` (the default) for
   * node_modules/.cache/kiln under the project's root, a directory
   * (relative to the root), or \`false\` for none.
   */
  cache?: string | boolean;
  /** When kiln has no binary for this platform, warn once and let the build succeed. */
  optional?: boolean;
  /** Called with kiln's summary after each run. */
  onSummary?: (summary: KilnSummary) => void;
}

/** One warning or error of the summary. */
export interface KilnProblem {
  path: string;
  reason: string;
  [key: string]: unknown;
}

/** The summary \`kiln --json\` prints. */
export interface KilnSummary {
  command: string;
  dry_run: boolean;
  assets: number;
  /** Siblings written by the run (compress). */
  written: number;
  /** Of those, the ones copied from the content cache (\`cache\`). */
  from_cache: number;
  unchanged: number;
  warnings: KilnProblem[];
  warning_count: number;
  errors: KilnProblem[];
  error_count: number;
  elapsed_seconds: number;
  [key: string]: unknown;
}

/** What precompress() rejects with when kiln fails. */
export interface KilnError extends Error {
  /** kiln's exit status (null if a signal killed it). */
  status: number | null;
  /** The signal that killed kiln, if one did. */
  signal: string | null;
  /** The summary's errors (empty when kiln printed no summary). */
  errors: KilnProblem[];
  /** The summary, when kiln printed one. */
  summary?: KilnSummary;
  /** Everything kiln wrote on stderr. */
  stderr: string;
}

/**
 * Run kiln (\`kiln --json [OPTIONS] -- DIR...\`) and resolve to its summary.
 * Throws a TypeError, before running anything, on an unknown option or a
 * value of the wrong type; rejects with a KilnError when kiln fails.
 */
export function precompress(dir: string | ReadonlyArray<string>,
  options: PrecompressOptions & { optional: true }): Promise<KilnSummary | null>;
export function precompress(dir: string | ReadonlyArray<string>,
  options?: PrecompressOptions & { optional?: false }): Promise<KilnSummary>;
export function precompress(dir: string | ReadonlyArray<string>,
  options?: PrecompressOptions): Promise<KilnSummary | null>;
`;
}

function main() {
  const [kiln, dir] = process.argv.slice(2);
  if (!kiln || !dir) {
    die('usage: node gen-api.js KILN PACKAGE_DIR');
  }
  const help = execFileSync(kiln, ['--help'], { encoding: 'utf8' });
  const version = execFileSync(kiln, ['--version'], { encoding: 'utf8' }).split('\n')[0];
  const table = optionTable(help);
  fs.mkdirSync(path.join(dir, 'lib'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'lib', 'options.json'), `${JSON.stringify(table, null, 2)}\n`);
  const dts = declarations(table, version);
  fs.writeFileSync(path.join(dir, 'index.d.ts'), dts);
  fs.writeFileSync(path.join(dir, 'index.d.mts'), dts);
}

main();
