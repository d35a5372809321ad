/*
 * bundler.h - the bundler evidence of immutable.h: what a bundler's own
 * manifest says about the names of its outputs.
 */
#ifndef KILN_BUNDLER_H
#define KILN_BUNDLER_H

#include "kiln.h"

#include <stdbool.h>
#include <stddef.h>

/* An output the manifest names: PATH as the manifest names it (URL
 * scheme, host, query and leading '/' taken off).  PROVEN: the manifest
 * proves its name holds a hash, at [START, START + LEN) of PATH (LEN 0:
 * the bundler says the output is immutable without saying where its hash
 * is); else it is only listed (an output the bundler did not hash,
 * "index.html", or whose hash nothing proves), DENIED when the bundler
 * says it did not hash it.  COMPLETE: the manifest is
 * of a format that accounts for every output the bundler wrote and hashed
 * (Vite's manifest, esbuild's metafile, webpack's stats), so that a file
 * beside PATH it does not prove was not hashed by it (a copy from Vite's
 * public/). */
struct kiln_proof {
	char *path;
	size_t start, len;
	bool proven;
	bool denied; /* the bundler says it is not immutable (webpack's info) */
	bool complete;
};

struct kiln_proofs {
	struct kiln_proof *v;
	size_t n, cap;
};

/*
 * Read the manifest TEXT (LEN bytes of JSON) into *OUT, adding to what it
 * holds.  The formats, told apart by their keys (docs/cache-control.md,
 * "The bundler"): Vite's manifest (an entry's "file" is proven when its
 * name is the entry's chunk's or source's name, a '-' or '.', and a token:
 * the token is what Vite inserted; its "css" files so through the chunk's
 * name; its "assets" only through their own entries),
 * webpack-manifest-plugin's and Create React App's (the key is the
 * output's name without the token), webpack's stats JSON
 * (assets[].info.immutable, webpack's own word), esbuild's metafile (as
 * Vite's, from entryPoint and inputs), Next.js's build-manifest.json
 * ("pages" with Next's "lowPriorityFiles" and "polyfillFiles", "devFiles"
 * or "rootMainFiles": every file under static/, which Next.js serves
 * immutable itself).  An
 * inserted token must be KILN_TOKEN_MIN_BUNDLER base64url bytes or more,
 * hash-like (kiln_token_hashlike(): "standalone", "background" are
 * words), not an upper-case word (kiln_token_words32()), and not the same
 * in two outputs of the manifest (a literal of the name pattern); one
 * that could be a chosen name or version (kiln_token_chosen(): "es2017",
 * "v20240301", base36, digits alone) but hex with a digit and a letter
 * only where the manifest proves its pattern: a strong token of its length,
 * or 3 distinct ones of its length in all.  Vite's
 * and esbuild's outputs prove their source maps (OUTPUT.map) too.  Returns
 * KILN_OK and sets *FORMAT to a static name ("Vite manifest", ...);
 * KILN_ERR_INVALID when TEXT is not JSON or no format kiln reads;
 * KILN_ERR_NOMEM.  Thread-safe.
 */
/* The *FORMAT kiln_bundler_read() names Next.js's build-manifest.json. */
#define KILN_FORMAT_NEXT "Next.js build manifest"

kiln_status kiln_bundler_read(const char *text, size_t len, struct kiln_proofs *out,
			      const char **format);

void kiln_proofs_free(struct kiln_proofs *p);

#endif
