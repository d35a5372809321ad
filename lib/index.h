/*
 * index.h - what a run saw of its files, kept beside the manifest, so that
 * the next run, check or clean need not read a file that has not changed.
 *
 * The manifest says what each asset's bytes were (their digests) and what
 * its siblings hold; only reading a file again proves that it still holds
 * those bytes.  The index adds, for each record, a stamp (record.h): the
 * asset's device, inode, mode, size, mtime and ctime, and each kept
 * sibling's inode and ctime (its size, mode and mtime are known), as they
 * were when the run read the asset and wrote or checked its siblings.
 *
 * The proof that a file whose status still matches its stamp holds the
 * bytes recorded is git's: every write to a file, and every change of its
 * mode or times, sets its ctime to the clock's time then, and no program
 * can set a ctime of its choosing.  So a file's ctime changes at every
 * change made after a moment at which the clock had passed it.  A stamp is
 * taken only when that moment is proved to have come: the asset's ctime,
 * plus the file system's timestamp granularity, is no later than the
 * clock's coarse time read before the asset was opened (a file changed
 * after the run began, or within the same clock tick, is "racy" and gets
 * no stamp: the next run reads it); a sibling's stamp is taken after the
 * pool, and only if its status is still what it was right after kiln
 * wrote or checked it, and its ctime, plus the granularity, is no later
 * than the clock's time then.  The granularity is not reported by the
 * kernel: a ctime with whole seconds is taken to be of a file system with
 * 2 s timestamps, any other to have the granularity of the digits it
 * ends with.  File systems whose timestamps another machine's clock sets
 * (NFS, SMB, FUSE, 9P, Ceph and the like) get no stamps at all, nor does a
 * file on another device than the tree's top.  Time set back, by root,
 * past a stamped ctime is the one thing the proof does not survive:
 * --reread reads every file.
 *
 * Replacing a file changes its inode, or makes a new one whose ctime is
 * its creation; renaming one changes its ctime (every Linux file system
 * kiln is used on sets it on rename).  Directories are always read whole
 * by the walk, so a name added or removed is seen whatever the
 * directory's mtime: a file named like a sibling that the stamp does not
 * cover sends its asset down the path that reads it.
 *
 * The index is one of kiln's files: written atomically beside the
 * manifest (".NAME.index" for the manifest NAME), only by runs that
 * write the manifest (not a dry run, a shard, or an archive's staging
 * tree), and left as it is when its bytes are unchanged; never served
 * (the snippets and kiln serve hide it), removed by kiln clean.  It is
 * only ever read together with the manifest it was written beside: it
 * records the manifest's device, inode, size, mtime and ctime once that
 * was in place, and a manifest changed, replaced or restored since makes
 * it worthless (the manifest is then read instead, and a new index
 * written).  It holds the whole record, so a run that trusts it never
 * parses the manifest, and a checksum over its bytes, so a damaged one is
 * never read.
 */
#ifndef KILN_INDEX_H
#define KILN_INDEX_H

#include "manifest.h"
#include "record.h"
#include "source.h"
#include "state.h"
#include "tempfile.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* The index of the manifest at MANIFEST_PATH: the same directory,
 * "." + its name + ".index".  Malloc'ed; NULL when out of memory. */
char *kiln_index_path(const char *manifest_path);

/* The name of the index of a manifest at its default place: the only name
 * an index has inside a tree (outputs.h), where kiln's own files are told
 * by their names. */
#define KILN_INDEX_NAME "." KILN_MANIFEST_NAME ".index"

/* Might files under the directory ROOT (its status TOP) be given stamps:
 * is its file system one whose timestamps this machine's clock sets? */
bool kiln_index_local(const char *root);

/*
 * Read the index at PATH into *ST (zeroed by the caller) if it belongs to
 * the manifest at MANIFEST_PATH as it is now and to the tree whose top has
 * status *TOP: true, with st->loaded, every record in the manifest and
 * the stamps it holds trusted; *DIGEST gets the options digest it was
 * written under (kiln_manifest_settings_digest()).  False for any index
 * that is missing, damaged, another manifest's or another tree's, and
 * when out of memory: *ST is then empty, and the manifest must be read.
 */
bool kiln_index_load(const char *path, const char *manifest_path, const struct stat *top,
		     struct kiln_state *st, uint8_t digest[32]);

/* What an index is written from. */
struct kiln_index_input {
	const char *root;               /* the tree's top, for the siblings */
	const struct stat *top;         /* its status */
	const char *manifest_path;      /* the manifest, in place */
	const uint8_t *digest;          /* the options' (32 bytes) */
	int64_t since_ns;               /* the coarse clock when the run began */
	bool local;                     /* kiln_index_local() of ROOT */
	const struct kiln_manifest_item *items; /* the manifest's records */
	size_t n;
	const struct kiln_stale *stale;
	size_t nstale;
	const struct kiln_snippet_rec *snip;
	size_t nsnip;
	const char *tree;               /* the manifest's "tree", or NULL */
};

/* May kiln replace or remove the file at PATH as its index: nothing is
 * there, or a regular file that begins as an index does (a file of
 * someone else's at that name, beside a manifest kept outside the tree,
 * is left alone).  A link is not followed and not kiln's.  Any thread. */
bool kiln_index_is_kilns(const char *path);

/*
 * Write the index of IN's manifest, just written or kept as it was, to
 * PATH through REG (tempfile.h; left alone when its bytes are the same):
 * every record with its stamp when trusted, or when taken in this run
 * (KILN_STAMP_SEEN) and confirmed now as the top of this file says; the
 * others without.  KILN_OK, or the failure in *ERR (no index then: the
 * old one, if any, is another manifest's).  Main thread.
 */
kiln_status kiln_index_write(struct kiln_temps *reg, const char *path, bool fsync,
			     const struct kiln_index_input *in, struct kiln_error *err);

/* Take the stamp of an asset read in this run: *ST its status when it was
 * opened, its siblings' statuses as run time found them (SIBS[c] for the
 * codings R keeps).  Sets R->stamp and R->stamped (KILN_STAMP_SEEN); the
 * index's write decides.  Any thread. */
void kiln_index_stamp(struct kiln_record *r, const struct stat *st, const struct stat *sibs);

/* Does the file status *ST (the walk's) still match R's stamp: the asset
 * itself, or (C >= 0) its sibling of coding C, which R keeps? */
bool kiln_index_matches(const struct kiln_record *r, const struct kiln_stat *st, int c);

/* The coarse clock now, in nanoseconds since the epoch: the clock file
 * systems stamp ctimes with. */
int64_t kiln_index_now(void);

/* The coarse clock once it is past THEN_NS (kiln_index_now()'s), sleeping
 * for the rest of its tick if need be (at most 100 ms): every change made
 * by then has a ctime before it. */
int64_t kiln_index_after(int64_t then_ns);

#endif
