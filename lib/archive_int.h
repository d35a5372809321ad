/*
 * archive_int.h - what the archive files (archive*.c, behind
 * kiln_run_archive()) share with each other, and nothing else includes.
 *
 * The files, lowest first; each uses only those above it:
 *   archive_items.c  the input's entries in memory, lookups, reports
 *   archive_stage.c  the staging tree: validating and creating entries,
 *                    hard links, link resolution
 *   archive_read.c   reading the input: an archive, or a directory
 *   archive_write.c  writing the output archive
 *   archive.c        the whole: kiln_run_archive() and the tree run
 *
 * Threads: everything here runs on the thread that called
 * kiln_run_archive() ("main"), except the wrapped callbacks of archive.c,
 * which the tree run calls from any of its threads, one at a time (under
 * its callback lock).
 */
#ifndef KILN_ARCHIVE_INT_H
#define KILN_ARCHIVE_INT_H

#include "run.h"
#include "tempfile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct archive;

#define BLOCK_SIZE 65536 /* bytes of data read or written at a time */
#define NONE ((size_t)-1)  /* no index */

enum item_type { ITEM_FILE, ITEM_DIR, ITEM_LINK };

/* One entry of the input, as it goes into the output.  Filled in by the
 * reader (archive_read.c) and completed by kiln_arc_stage_entry(), which
 * hands it to the item list; read-only from then on, except LEADER. */
struct item {
	char *name;     /* as in the input: the output entry's name */
	char *norm;     /* normalised path from the input's root; "" is the root */
	char *link;     /* ITEM_LINK: the target, as stored */
	char *hardlink; /* a hard link: norm of the entry holding the data
	                   (set by kiln_arc_stage_entry()) */
	char *uname, *gname;
	enum item_type type;
	unsigned mode;  /* permission bits, & 07777 */
	int64_t mtime;
	long mtime_ns;
	int64_t uid, gid;
	size_t leader;  /* hard-linked group: the output entry with the data;
	                   NONE from kiln_run_archive(), set by
	                   kiln_arc_write_output() */
};

/* Open addressing over indexes into a key array; slot value 0 is empty.
 * Written only by kiln_arc_table_add(). */
struct table {
	size_t *slot;
	size_t cap, n;
};

/* The key of index I in the array KEYS behind a table. */
typedef const char *(*keyof_fn)(const void *keys, size_t i);

/* A sibling the tree run kept: written by archive.c's wrapped on_file,
 * read by kiln_arc_write_output(). */
struct kept {
	char *rel;      /* path relative to the tree */
	int coding;
	char *suffix;   /* a dictionary delta's (".<id>.dcz"), owned; NULL for a
	                   coding's sibling */
};

/* A source of entry data: an archive's current entry, or a file. */
struct data_source {
	struct archive *a;
	int fd;
};

/* One kiln_run_archive() call.  Next to each field, the file that writes
 * it; every other file only reads it. */
struct ctx {
	/* archive.c, before anything else; read-only afterwards */
	struct kiln_run *run;
	const struct kiln_archive_options *aopt;
	const char *input, *output;
	kiln_archive_format format;
	bool is_dir;
	struct kiln_temps *temps;    /* the run's */
	uint8_t *buf;                /* BLOCK_SIZE bytes, scratch for whichever
	                                step is under way */

	/* archive_stage.c: kiln_arc_make_stage(), kiln_arc_drop_stage() */
	struct kiln_tempfile stage;  /* the staging directory */
	int root_fd;                 /* ... open */

	/* archive_items.c (kiln_arc_push_item(), called by the stage) */
	struct item *items;
	size_t n, cap;
	struct table byname;    /* items by norm */
	/* archive_stage.c: kiln_arc_note_inode(), for a directory input */
	char **inokeys;         /* "dev:ino" of linked files */
	size_t *inoitem, ninokeys, capinokeys;
	struct table byino;
	/* archive_stage.c: the limits */
	uint64_t expanded;      /* bytes of entry data so far */

	char *tree;             /* archive_stage.c: norm of the tree: "" or the
	                           top directory */
	char *tree_path;        /* archive.c: its path in the staging directory */

	/* archive.c: the tree run, through the wrapped callbacks (any thread
	 * of the tree run, one at a time) */
	struct kiln_callbacks user;  /* the caller's */
	bool failed;            /* also archive_items.c: anything reported */
	bool failed_outside;    /* archive.c: an error outside the tree (an
	                           unreadable --previous): the output is still
	                           written, the run still fails */
	struct kept *kept;
	size_t nkept, capkept;
	/* Base names of the artifacts the run wrote at the staging tree's
	 * top (static strings: KILN_MANIFEST_NAME, the snippets' names). */
	const char *artifacts[1 + 3 * 8];
	size_t nartifacts;
	bool artifacts_elsewhere; /* copied to opt.artifacts_dir: not into OUT */

	char msg[512];          /* archive_items.c: a libarchive message, for
	                           one callback */
};

/* ---- archive_items.c ---- */

/* A malloc'ed A + B + C, or NULL. */
char *kiln_arc_cat3(const char *a, const char *b, const char *c);

/* The index in T whose key is KEY, or NONE. */
size_t kiln_arc_table_find(const struct table *t, const char *key, keyof_fn keyof,
			   const void *keys);
/* Add INDEX to T; false when out of memory. */
bool kiln_arc_table_add(struct table *t, size_t index, keyof_fn keyof, const void *keys);
/* Keys in an array of strings. */
const char *kiln_arc_string_of(const void *keys, size_t i);

/* The item whose norm is NORM, or NONE. */
size_t kiln_arc_find_item(const struct ctx *c, const char *norm);
/* Append *IT (whose strings the list then owns; *IT is cleared). */
kiln_status kiln_arc_push_item(struct ctx *c, struct item *it);
void kiln_arc_item_free(struct item *it);

/* One on_file call about the input: PATH names an entry ("" the input).
 * Sets c->failed. */
void kiln_arc_report(struct ctx *c, const char *path, kiln_status st, int errnum,
		     const char *what);
/* One on_artifact call ("archive") about the output.  Sets c->failed. */
void kiln_arc_report_output(struct ctx *c, kiln_status st, int errnum, const char *what);
/* FALLBACK with libarchive's message for A, in c->msg. */
const char *kiln_arc_msg(struct ctx *c, struct archive *a, const char *fallback);

/* ---- archive_stage.c ---- */

/* Make the staging directory in OUTPUT's directory, and open it. */
kiln_status kiln_arc_make_stage(struct ctx *c);
/* Remove it, with everything below it.  Safe when it was never made. */
void kiln_arc_drop_stage(struct ctx *c);

/* Normalise NAME: drop empty and "." components.  Returns NULL with *OUT
 * malloc'ed ("" for the root), or a static reason to refuse NAME (*OUT
 * NULL; "out of memory" when that is the reason). */
const char *kiln_arc_normalise(const char *name, char **out);

/* Validate the entry *IT and create it in the staging tree (see the
 * definition).  Takes the strings of *IT in every case. */
kiln_status kiln_arc_stage_entry(struct ctx *c, const char *name, struct item *it,
				 const char *hardlink, const struct data_source *src, int64_t size);

/* Directory input: *HARDLINK_OF is NULL, or (malloc'ed) the norm of the
 * first item seen with the inode of ST. */
kiln_status kiln_arc_note_inode(struct ctx *c, const struct stat *st, char **hardlink_of);

/* Once the input is staged: choose c->tree, then refuse a link that leaves
 * it. */
kiln_status kiln_arc_choose_tree(struct ctx *c);
kiln_status kiln_arc_check_links(struct ctx *c);

/* The file item a link (checked by kiln_arc_check_links()) resolves to, or
 * NULL. */
const struct item *kiln_arc_link_final(const struct ctx *c, const struct item *it);

/* ---- archive_read.c ---- */

/* Stage every entry of the archive, or the directory, c->input. */
kiln_status kiln_arc_read_archive(struct ctx *c);
kiln_status kiln_arc_read_directory(struct ctx *c);

/* ---- archive_write.c ---- */

/* Write c->output from the items and the staging tree after the tree run. */
kiln_status kiln_arc_write_output(struct ctx *c);

#endif
