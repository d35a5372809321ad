// index.mjs - kiln-precompress's JavaScript API, the ESM entry point: the
// same precompress() as the CommonJS one (index.js).
import api from './index.js';

export const { precompress } = api;
