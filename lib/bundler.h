/*
 * bundler.h - the bundler evidence of immutable.h: what a bundler's own
 * manifest says about the names of its outputs.
 */
#ifndef KILN_BUNDLER_H
#define KILN_BUNDLER_H

#include "kiln.h"

#include <stdbool.h>
#include <stddef.h>

/* An output whose name the manifest proves holds a hash: PATH as the
 * manifest names it (URL scheme, host, query and leading '/' taken off),
 * and the hash's bytes in PATH (LEN 0: the bundler says the output is
 * immutable without saying where its hash is).  COMPLETE: the manifest
 * is of a format that accounts for every output the bundler hashed (Vite's
 * manifest, esbuild's metafile, webpack's stats), so that a file beside
 * PATH it does not prove was not hashed by it (a copy from Vite's
 * public/). */
struct kiln_proof {
	char *path;
	size_t start, len;
	bool complete;
};

struct kiln_proofs {
	struct kiln_proof *v;
	size_t n, cap;
};

/*
 * Read the manifest TEXT (LEN bytes of JSON) into *OUT, adding to what it
 * holds.  The formats, told apart by their keys (docs/cache-control.md,
 * "Cache-Control"): Vite's manifest (an output is proven when its name is
 * its chunk's or source's name, a '-' or '.', and a token: the token is
 * what Vite inserted), webpack-manifest-plugin's and Create React App's
 * (the key is the output's name without the token), webpack's stats JSON
 * (assets[].info.immutable, webpack's own word), esbuild's metafile (as
 * Vite's, from entryPoint and inputs), Next.js's build-manifest.json
 * (every file under static/, which Next.js serves immutable itself) and
 * Angular's ngsw.json (names with the token shapes of Angular's hashes).
 * Vite's and esbuild's outputs prove their source maps (OUTPUT.map) too.
 * Returns KILN_OK and sets *FORMAT to a static name ("vite", ...);
 * KILN_ERR_INVALID when TEXT is not JSON or no format kiln reads;
 * KILN_ERR_NOMEM.  Thread-safe.
 */
kiln_status kiln_bundler_read(const char *text, size_t len, struct kiln_proofs *out,
			      const char **format);

void kiln_proofs_free(struct kiln_proofs *p);

#endif
