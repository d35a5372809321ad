// account.js - the bundler's own account of the files it wrote, for kiln's
// --fingerprints: which names hold a content hash, and where.  kiln reads
// each as the bundler's manifest it has the form of (docs/cache-control.md,
// "The bundler"), which accounts for every output: kiln then knows each
// hashed output, whatever its hash looks like, and takes no other file of
// those directories for one (a copy from Vite's public/).
//
//   rollupAccount(bundle)   Vite's and Rollup's bundle (writeBundle's
//                           second argument) in the form of Vite's
//                           manifest: each chunk under its name, each
//                           asset under the name of the file it came from
//   webpackAccount(assets)  webpack's compilation.getAssets() in the form
//                           of webpack's stats JSON: each asset's name and
//                           webpack's own info.immutable and contenthash
//   withAccount(account, fn)
//                           writes ACCOUNT to a file of its own in the
//                           system's temporary directory, never in the
//                           output (a server would send it), calls
//                           fn(path) and removes the file when fn settles
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');

// The name Rollup gives an asset's source: its names (Rollup 4) or name.
function assetName(asset) {
  if (Array.isArray(asset.originalFileNames) && asset.originalFileNames.length) {
    return asset.originalFileNames[0];
  }
  if (Array.isArray(asset.names) && asset.names.length) {
    return asset.names[0];
  }
  return typeof asset.name === 'string' ? asset.name : null;
}

function rollupAccount(bundle, into) {
  const account = into || {};
  for (const file of Object.values(bundle || {})) {
    if (!file || typeof file.fileName !== 'string') {
      continue;
    }
    const entry = { file: file.fileName };
    if (file.type === 'chunk' && typeof file.name === 'string') {
      entry.name = file.name;
    } else if (file.type === 'asset' && assetName(file) !== null) {
      entry.src = assetName(file);
    }
    account[file.fileName] = entry;
  }
  return account;
}

function webpackAccount(assets) {
  return {
    assets: (assets || []).map((a) => ({
      name: a.name,
      info: {
        immutable: Boolean(a.info && a.info.immutable),
        development: Boolean(a.info && a.info.development),
        ...(a.info && a.info.contenthash ? { contenthash: a.info.contenthash } : {}),
      },
    })),
  };
}

async function withAccount(account, fn) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-account-'));
  try {
    const file = path.join(dir, 'account.json');
    fs.writeFileSync(file, JSON.stringify(account));
    return await fn(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { rollupAccount, webpackAccount, withAccount };
