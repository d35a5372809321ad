// rollup.js - kiln-precompress/rollup: the same plugin as
// kiln-precompress/vite (lib/rollup-plugin.js), CommonJS.
'use strict';

module.exports = require('./lib/rollup-plugin.js');
