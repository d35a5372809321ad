// vite.js - kiln-precompress/vite: the Vite (and Rollup) plugin, CommonJS
// (vite.mjs is the ESM entry point; lib/rollup-plugin.js the plugin).
'use strict';

module.exports = require('./lib/rollup-plugin.js');
