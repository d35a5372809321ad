/*
 * kiln.h - the public interface of libkiln, the library behind the kiln tool.
 *
 * libkiln walks a tree of web assets and writes, next to each file that
 * benefits, a precompressed sibling per content-coding (NAME + the coding's
 * suffix), so that a web server only ever sends prebuilt bytes.  Which
 * content-codings exist is the library's table, read with kiln_coding_info():
 * a program built against this header learns them at run time.
 *
 * Conventions used by every function below:
 *  - Sizes are in bytes, times in seconds (double) unless a name says _ns.
 *  - Paths are byte strings (any bytes but NUL; not necessarily UTF-8).
 *  - The library never prints, never exits and never aborts on bad input: it
 *    returns a kiln_status and describes each file's outcome through the
 *    callbacks the caller registers.  Wording, verbosity and exit codes are
 *    the caller's business.
 *  - Strings passed to callbacks are owned by the library and valid only for
 *    the duration of the call.
 *
 * Sections: Types, Codings, Options, Callbacks, Run, Commands, Archives,
 * Names and versions.
 */
#ifndef KILN_H
#define KILN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_VERSION_MAJOR 0
#define KILN_VERSION_MINOR 2
#define KILN_VERSION_PATCH 0
#define KILN_VERSION_STRING "0.2.0"

/* ====================================================================
 * Types
 * ==================================================================== */

/* Result of a library call, and the kind of a per-file error. */
typedef enum kiln_status {
	KILN_OK = 0,
	KILN_ERR_INVALID,   /* an argument or option is out of range */
	KILN_ERR_NOMEM,     /* an allocation failed */
	KILN_ERR_IO,        /* a system call failed; errnum says why */
	KILN_ERR_CHANGED,   /* the source changed while it was read */
	KILN_ERR_VERIFY,    /* a sibling did not decode to its source */
	KILN_ERR_UNSAFE,    /* refused: would write through or over a non-file */
	KILN_ERR_ENCODER,   /* an encoder failed for a reason other than memory */
	KILN_ERR_CANCELLED, /* kiln_run_cancel() was called */
	KILN_ERR_BUSY,      /* another kiln is changing the tree (opt.no_wait) */
} kiln_status;

/* The decision kiln made for one file found under a tree. */
typedef enum kiln_outcome {
	KILN_OUTCOME_COMPRESSED, /* at least one sibling kept */
	KILN_OUTCOME_SIBLING,    /* is itself a sibling or a kiln output */
	KILN_OUTCOME_EXCLUDED,   /* matched --exclude, or no --include */
	KILN_OUTCOME_MEDIA,      /* already-compressed content */
	KILN_OUTCOME_SMALL,      /* smaller than min_size */
	KILN_OUTCOME_NO_GAIN,    /* no encoding met max_ratio */
	KILN_OUTCOME_LONG_NAME,  /* no sibling name would fit NAME_MAX */
	KILN_OUTCOME_SYMLINK,    /* a symbolic link, not followed */
	KILN_OUTCOME_SPECIAL,    /* FIFO, socket or device: never opened */
	KILN_OUTCOME_ERROR,      /* failed; see kiln_report.error */
	KILN_NOUTCOMES
} kiln_outcome;

/* Where a kept sibling's bytes came from. */
typedef enum kiln_origin {
	KILN_ORIGIN_ENCODER = 0, /* encoded in this run */
	KILN_ORIGIN_CACHE,       /* copied from the content cache */
	KILN_ORIGIN_PREVIOUS,    /* an earlier run's sibling, left in place */
} kiln_origin;

/* What happened to one content-coding of one file. */
typedef enum kiln_coding_outcome {
	KILN_CODING_OFF = 0, /* not requested, or the file was not compressed */
	KILN_CODING_KEPT,    /* sibling written (or, dry run, would be) */
	KILN_CODING_NO_GAIN, /* encoded, but not small enough to keep */
	KILN_CODING_LONG_NAME, /* NAME + suffix would exceed NAME_MAX: none */
} kiln_coding_outcome;

/* An error: what failed, and the errno of the failing call (0 if none). */
struct kiln_error {
	kiln_status status;
	int errnum;
	/* Static lowercase phrase naming the failed step, e.g. "cannot open",
	 * "cannot write"; never NULL when status != KILN_OK. */
	const char *what;
	/* What to append to the report's path to name the file the error is
	 * about: "" for the source itself, a coding's suffix for its sibling. */
	const char *suffix;
};

/* ====================================================================
 * Codings
 * ==================================================================== */

/*
 * A content-coding kiln can produce: an index into the library's table of
 * codings, 0 .. kiln_coding_count() - 1.  The order of the table is the
 * order of preference when two siblings of one file tie in size (the more
 * widely accepted coding first).  At most KILN_MAX_CODINGS.
 */
typedef int kiln_coding;
#define KILN_MAX_CODINGS 8

/* Everything a caller may want to know about one coding.  Static. */
struct kiln_coding_info {
	/* The HTTP content-coding token of the IANA registry (RFC 9110
	 * section 8.4.1), as Content-Encoding carries it and the manifest keys
	 * it. */
	const char *name;
	/* The sibling's suffix, with the dot: NAME.SUFFIX is the sibling of
	 * NAME. */
	const char *suffix;
	/* How options and people name it: "--WORD", "--no-WORD",
	 * "--WORD-LEVEL_WORD N". */
	const char *word;
	const char *level_word; /* "level" or "quality" */
	int level_min, level_max, level_default;
	int level_best;          /* what --best asks for */
	bool default_on;         /* written unless turned off */
	const char *summary;     /* one line for --help, e.g. "gzip (RFC 1952), libdeflate" */
	/* An optional second encoder setting, for codings that have one (NULL
	 * EXTRA_WORD otherwise): "--EXTRA_WORD" turns it on at EXTRA_DEFAULT,
	 * "--EXTRA_WORD-EXTRA_PARAM N" sets it (EXTRA_MIN..EXTRA_MAX),
	 * "--no-EXTRA_WORD" turns it off (0).  For gzip: zopfli and its
	 * iterations. */
	const char *extra_word, *extra_param, *extra_summary;
	int extra_min, extra_max, extra_default, extra_best;
};

/* Number of codings in the table (at least 1, at most KILN_MAX_CODINGS). */
unsigned kiln_coding_count(void);

/* The table row of coding C, or NULL when C is out of range. */
const struct kiln_coding_info *kiln_coding_info(kiln_coding c);

/* The coding whose name or word is S (case-sensitive), or -1. */
kiln_coding kiln_coding_find(const char *s);

/* ====================================================================
 * Options
 * ==================================================================== */

#include "kiln_options.h" /* struct kiln_options */

/* Fill *opt with the defaults documented in kiln_options.h.  Never fails. */
void kiln_options_init(struct kiln_options *opt);

/* Check *opt for values out of range.  Returns KILN_OK, or KILN_ERR_INVALID
 * with *field (if non-NULL) set to a static name of the first bad field
 * ("codings", "level", "extra", "max_ratio", "servers", "url_prefix", "shard",
 * "manifest_path" (named like a shard part), "previous",
 * "fingerprints") and *coding (if
 * non-NULL) to the coding whose level or extra setting is bad (-1 else). */
kiln_status kiln_options_check(const struct kiln_options *opt, const char **field,
			       kiln_coding *coding);

/* ====================================================================
 * Callbacks
 * ==================================================================== */

/* Events reported through kiln_callbacks.on_event. */
typedef enum kiln_event {
	/* compress, clean (with opt.dry_run: what would happen) */
	KILN_EVENT_REMOVED,          /* removed what kiln wrote (ERR: a snippet) */
	KILN_EVENT_REMOVE_FAILED,    /* could not remove it (ERR says why) */
	KILN_EVENT_FOREIGN,          /* a sibling kiln did not write, left alone;
	                                it decodes to its source, or (ERR not
	                                NULL, ERR->what says so) its source is
	                                gone and it is an asset of its own */
	KILN_EVENT_FOREIGN_STALE,    /* a sibling kiln did not write, left alone,
	                                that does NOT decode to its source (a
	                                server would send stale bytes): a failure
	                                of the tree, the operation's KILN_ERR_IO */
	KILN_EVENT_FOREIGN_REPLACED, /* a sibling kiln did not write was replaced
	                                by kiln's own; ERR->what says whether it
	                                decoded to its source, ERR->status is
	                                KILN_OK if it did, KILN_ERR_VERIFY if not */
	KILN_EVENT_TEMP_REMOVED,     /* removed a temporary file of a dead run */
	KILN_EVENT_STATE_IGNORED,    /* the previous manifest was unusable */
	KILN_EVENT_CACHE_FAILED,     /* the cache could not be used (ERR) */
	KILN_EVENT_INCLUDE_UNMATCHED, /* an include glob (ERR->what) matched no
	                                 file of the tree (PATH); so an exclude: */
	KILN_EVENT_EXCLUDE_UNMATCHED,
	KILN_EVENT_DICT_DELTA,       /* a dictionary delta (kiln_options.previous)
	                                kept: PATH is the delta's file, written
	                                (or, dry run, would be) or left as the
	                                earlier run made it; ERR NULL */
	KILN_EVENT_SNIPPET_LEFT_OUT, /* left out of a snippet (ERR->what: why) */
	KILN_EVENT_SNIPPET_EDITED,   /* a snippet an earlier run wrote that this
	                                one does not (PATH) has other bytes than
	                                kiln wrote: someone's edit, left in place
	                                and no longer kiln's; ERR NULL */
	KILN_EVENT_PREVIOUS_UNUSED,  /* --previous PATH gives no delta (ERR->what) */
	KILN_EVENT_BEHIND_LINK,      /* a sibling the manifest records (PATH) is
	                                out of reach: a directory on its way is
	                                a symbolic link now (ERR->what names it),
	                                so what is there is outside the tree and
	                                left alone; its record is dropped */
	KILN_EVENT_WAITING,          /* another kiln is changing the tree (PATH):
	                                waiting for it, once per tree (ERR->what
	                                "waiting for another kiln (pid N)") */
	KILN_EVENT_FINGERPRINTS,     /* a bundler's manifest (PATH) read: ERR->what
	                                (ERR->status KILN_OK) says its format,
	                                how many files of the tree it proves and
	                                which directories it decides, or that it
	                                is stale, or (one found at the top) no
	                                manifest kiln reads */
	KILN_EVENT_BYTES_CHANGED,    /* a file whose name was read as holding a
	                                content hash (PATH) has other bytes than
	                                under the same name before (the last
	                                run's record, or an earlier release):
	                                revalidated, not immutable, while the
	                                name stays; ERR NULL */
	/* check: the tree (PATH) is being changed by another kiln (ERR->what
	 * names its pid): what check found is no problem of the tree; a dry
	 * run (ERR->status KILN_OK: a warning): what it says may change */
	KILN_EVENT_IN_PROGRESS,
	/* check: each is a problem */
	KILN_EVENT_NO_MANIFEST,      /* no readable manifest */
	KILN_EVENT_OTHER_TREE,       /* the manifest given (--manifest, PATH) is
	                                another tree's record (ERR->what says
	                                whose): not used (also clean's, which
	                                then removes nothing) */
	KILN_EVENT_OUT_OF_DATE,      /* manifest does not match the tree */
	KILN_EVENT_MISSING_SIBLING,  /* a sibling the manifest records is gone */
	KILN_EVENT_STALE_SIBLING,    /* a sibling does not decode to its source
	                                (ERR->what says more if it is not one
	                                kiln wrote) */
	KILN_EVENT_ORPHANED_SIBLING, /* a sibling whose source is gone */
	KILN_EVENT_UNRECORDED_SIBLING, /* a sibling the manifest does not know */
	KILN_EVENT_SIBLING_METADATA, /* a sibling's mtime or permission bits are
	                                not its source's (ERR->what says which) */
	KILN_NEVENTS
} kiln_event;

/* One file's outcome, passed to kiln_callbacks.on_file. */
struct kiln_report {
	const char *root;    /* the tree root as given to kiln_run_tree() */
	const char *path;    /* path relative to root, '/'-separated; "" means
	                        the root itself (an error about the root) */
	kiln_outcome outcome;
	uint64_t size;       /* source size in bytes (0 if unknown) */
	struct {
		kiln_coding_outcome outcome;
		uint64_t size;   /* encoded size in bytes, when encoded */
		uint8_t sha256[32]; /* SHA-256 of the sibling, when KEPT */
		kiln_origin origin; /* when KEPT */
	} coding[KILN_MAX_CODINGS];
	struct kiln_error error; /* set when outcome == KILN_OUTCOME_ERROR */
	/* Digests of the source, when hashed is true (regular files that were
	 * read while a manifest is to be written). */
	bool hashed;
	uint8_t sha256[32];
	uint8_t sha384[48];
	/* Set by kiln_run_archive() when ROOT is an archive file and PATH the
	 * name of one of its entries (a message should read "ROOT: PATH", not
	 * "ROOT/PATH"). */
	bool in_archive;
	/* Why it is served immutable (kiln_options.cache_control), static:
	 * "name", "bundler", "previous", "tree", "glob"; NULL: it is not. */
	const char *immutable;
};

/*
 * Callbacks.  Any may be NULL.  They are called from the library's worker
 * threads, but never two at once for one run (the library serialises them),
 * so a callback needs no locking of its own for state only it touches.
 * A callback must not call back into the same kiln_run.
 */
struct kiln_callbacks {
	/* After the walk of one tree: how many files will be opened (to be
	 * classified, compressed or hashed) and their total size in bytes. */
	void (*on_plan)(void *user, const char *root, uint64_t files, uint64_t bytes);
	/* While those files are worked on: FILES more of them are finished and
	 * BYTES more of their bytes have been read or encoded (a file encoded
	 * into N codings in memory counts 1/N of its bytes per coding, as each
	 * encoder consumes them).  Called as work happens, several times a
	 * second while an encoder runs; over one tree the increments add up
	 * exactly to the totals on_plan announced. */
	void (*on_progress)(void *user, uint64_t files, uint64_t bytes);
	/* Once per entry found under the tree, with its final outcome. */
	void (*on_file)(void *user, const struct kiln_report *report);
	/* Things that happen beside a file's outcome; see kiln_event.  PATH is
	 * the full path of the file concerned; CODING is the coding of the
	 * sibling concerned or -1; ERR is NULL unless the event is a failure
	 * (or, for check's problems, carries a detail in err->what). */
	void (*on_event)(void *user, kiln_event event, const char *path, int coding,
			 const struct kiln_error *err);
	/* After each tree, once per artifact (WHAT is "manifest" or "nginx
	 * snippet") with the PATH written, and ERR NULL on success, or the
	 * reason it could not be written; or ERR's status KILN_OK (what
	 * "unchanged") when PATH already held exactly its bytes and was left
	 * as it was (same inode, same mtime). */
	void (*on_artifact)(void *user, const char *what, const char *path,
			    const struct kiln_error *err);
	void *user;
};

/* ====================================================================
 * Run
 * ==================================================================== */

/* An opaque run: options, callbacks, worker state and live temporary files. */
struct kiln_run;

/*
 * Create a run.  Copies *opt (and the glob strings) and *cb.  Returns NULL
 * when out of memory or when *opt is invalid (check it first with
 * kiln_options_check()).  Free it with kiln_run_free().
 */
struct kiln_run *kiln_run_new(const struct kiln_options *opt, const struct kiln_callbacks *cb);

/* Free a run.  NULL is allowed.  Must not be called while an operation is
 * running on it. */
void kiln_run_free(struct kiln_run *run);

/*
 * Walk the directory ROOT and write siblings as described at the top of this
 * file, on opt.jobs threads, then the manifest and nginx snippet (unless
 * turned off, or a dry run).  Blocks until done.  Every entry found gets one
 * on_file call.  Returns:
 *   KILN_OK            the walk completed (individual files may still have
 *                      failed: they were reported with KILN_OUTCOME_ERROR);
 *   KILN_ERR_IO        ROOT itself could not be opened or is not a
 *                      directory (also reported through on_file, path "",
 *                      errnum ENOTDIR for a file), or an artifact, a
 *                      removal or the cache failed, or a sibling kiln did
 *                      not write does not decode to its source
 *                      (KILN_EVENT_FOREIGN_STALE) (reported through
 *                      on_artifact or on_event);
 *   KILN_ERR_INVALID   refused, nothing written (reported through on_file,
 *                      path ""): opt.write_manifest is false and ROOT holds
 *                      kiln's record of an earlier run; or the include and
 *                      exclude globs exclude every file that the record
 *                      holds siblings of, so that the run would remove
 *                      every one of them (a mistyped --include does that),
 *                      unless opt.force;
 *   KILN_ERR_NOMEM     out of memory before work could start;
 *   KILN_ERR_CANCELLED kiln_run_cancel() was called (see there).
 *
 * The record.  The manifest is kiln's record of every sibling it wrote.  A
 * run reads it back (and the journals of runs that died before writing
 * theirs, ROOT/.kiln-journal-XXXXXX), so that:
 *  - a file whose content, coding and encoder recipe match the record
 *    keeps its siblings untouched (inode and mtime unchanged; the mtime
 *    and mode are reset to the source's if only they moved);
 *  - a sibling the record holds is removed when its source is gone or no
 *    longer gets it, if its bytes are still what kiln wrote (a sibling kiln
 *    did not write is never removed: KILN_EVENT_FOREIGN); one that cannot be
 *    removed stays in the record, as stale, for the next run;
 *  - a file or directory that cannot be read keeps its record (its
 *    siblings are left as they are; the file is reported as an error), and
 *    a file that vanishes during the run loses its siblings;
 *  - a sibling name the record holds is never taken for an asset.
 * A sibling kiln did not write is never removed, but it is checked against
 * its source: beside a file kiln compresses, it is replaced by kiln's own
 * (KILN_EVENT_FOREIGN_REPLACED); elsewhere it is left, and reported as
 * KILN_EVENT_FOREIGN if it decodes to its source, as KILN_EVENT_FOREIGN_STALE
 * (a failure) if it does not.  A file whose name leaves no room for a
 * coding's suffix within NAME_MAX gets no sibling of that coding
 * (KILN_CODING_LONG_NAME; KILN_OUTCOME_LONG_NAME when no coding fits).  An
 * include or exclude glob that matches no file of the tree is a
 * KILN_EVENT_INCLUDE_UNMATCHED or KILN_EVENT_EXCLUDE_UNMATCHED event.
 * With opt.cache_dir, encodings are looked up in and added to the cache.
 *
 * Guarantees, whatever happens: sources are only read, never written; a
 * sibling appears under its final name only complete (temporary file in the
 * same directory, then rename(2)); the sibling has the source's permission
 * bits (mode & 0777) and exact atime/mtime (nanoseconds); its size differs
 * from the source's and from every other sibling's of the same file (servers
 * build an ETag from mtime and size); encoded bytes depend only on the source
 * bytes and the options, never on opt.jobs.  An unchanged re-run writes
 * nothing at all in the tree.  Not thread-safe for one run; different runs
 * may be used concurrently.
 *
 * Shards.  With opt.shard_count N, only the files of shard opt.shard_index
 * (kiln_shard_of()) are worked on; every other file, sibling, record and
 * journal is left untouched, so shards may run on copies of the tree or at
 * once on one.  The manifest is only read; the record goes to the part
 * kiln-manifest.shard-K-of-N[.NAME].json beside it; no snippet is written.  Until
 * kiln_merge_tree() the parts are kiln's record too: every run knows their
 * siblings as kiln's, and a run of the whole tree removes the parts it read
 * once its manifest is written.
 */
kiln_status kiln_run_tree(struct kiln_run *run, const char *root);

/*
 * Ask a run to stop as soon as possible, and to leave a tree it can vouch
 * for: no file is encoded from then on (an encode under way is abandoned at
 * its next chunk), files not finished keep what the record says when their
 * content is unchanged and lose their siblings otherwise, and the manifest
 * is written as usual, recording exactly the siblings on disk.  The
 * operation then returns KILN_ERR_CANCELLED (kiln_run_tree() does not start
 * another tree).  Async-signal-safe and thread-safe.
 */
void kiln_run_cancel(struct kiln_run *run);

/*
 * Unlink every temporary file and directory the run has on disk, and make
 * the run create no new one: every later write fails as cancelled.  For a
 * program about to die at once (a second SIGINT): call it from a thread
 * that waits for the signal (sigwait(3)), then re-raise.  The run journal is
 * left, so that the next run still knows which siblings this one wrote.
 * Thread-safe; not async-signal-safe (it takes the temporary-file
 * registry's lock, which is what guarantees that no temporary file is
 * created behind its back).  Temporary files are named ".kiln-XXXXXX.tmp"
 * in the directory of the file they become.  The run is unusable
 * afterwards, except for kiln_run_free().
 */
void kiln_run_remove_temps(struct kiln_run *run);

/* ====================================================================
 * Commands
 * ==================================================================== */

/*
 * `kiln check`: compare the tree ROOT with its manifest (opt.manifest_path,
 * or ROOT/kiln-manifest.json) and write nothing.  Every asset must be in the
 * manifest with the same size and SHA-256; every sibling it records must
 * exist, decode to its current source and have its source's mtime and
 * permission bits; no sibling may exist that it does not record (one that
 * does not decode to its source is a stale sibling); every entry must still
 * exist; no sibling may be recorded as stale; every dictionary delta it
 * records must hold the recorded bytes (its dictionary is not at hand to
 * decode it with), name its dictionary and have its source's mtime and
 * permission bits.  Each problem is one on_event call (KILN_EVENT_NO_MANIFEST
 * .. KILN_EVENT_UNRECORDED_SIBLING, a detail in err->what where there is
 * one), counted in *problems.  I/O errors on files go to on_file.  Returns
 * KILN_OK, or KILN_ERR_IO if ROOT cannot be walked or a file read.  check
 * takes no lock: when another kiln holds the tree's (opt.no_wait), as the
 * check begins or ends, no problem is told, *problems is 0, one
 * KILN_EVENT_IN_PROGRESS is, and it returns KILN_ERR_BUSY.
 */
kiln_status kiln_check_tree(struct kiln_run *run, const char *root, uint64_t *problems);

/*
 * `kiln clean`: remove every sibling the record of ROOT holds (only if its
 * content still has the recorded SHA-256: anything else is reported as
 * KILN_EVENT_FOREIGN and left), kiln's temporary files and dead journals,
 * the nginx snippet (only if it is one kiln generated) and the manifest
 * itself; the parts of unmerged shard runs are records too (the siblings
 * they record are removed the same way, and then the parts).  Sources and
 * every other file are left alone.  Each removal is a KILN_EVENT_REMOVED
 * event, counted in *removed (with opt.dry_run, nothing
 * is removed: the events and count say what would be).  A file beside its
 * source and named like its sibling that the record does not hold is left
 * too, and reported: KILN_EVENT_FOREIGN if it decodes to the source,
 * KILN_EVENT_FOREIGN_STALE if not.  Files named like a dictionary delta
 * (NAME.<16 hex>.dcz, kiln_options.previous) are kiln's whoever wrote
 * them: every regular one is removed (one that is not a regular file is
 * KILN_EVENT_FOREIGN_STALE).  Returns KILN_OK; KILN_ERR_IO if the
 * manifest is unreadable, something could not be removed, or a
 * KILN_EVENT_FOREIGN_STALE was reported.
 */
kiln_status kiln_clean_tree(struct kiln_run *run, const char *root, uint64_t *removed);

/*
 * `kiln merge`: make ROOT's manifest and snippet from the parts that the N
 * shard runs of ROOT wrote (kiln_run_tree(), "Shards"), exactly as one run
 * of the whole tree with the same settings would have written them.  The
 * encoding settings (codings, levels, sizes, every glob) are the parts';
 * opt.follow_symlinks must be the shards'; the artifacts' paths, servers,
 * URL prefix, cache_control and fsync are opt's.  First the parts must all
 * be there (1..N of one N), with the same settings and this library's kiln
 * and encoder versions, each recording files of its own shard only and no
 * file twice; and agree with the tree: every file a run would record is
 * recorded with its current size and SHA-256, every recorded sibling is
 * there with its recorded size and SHA-256.  Each problem is one on_file
 * call (KILN_OUTCOME_ERROR, PATH the file or part, error.what the
 * problem); then nothing is written, and KILN_ERR_INVALID is returned
 * (KILN_ERR_IO if something could not be read).  Otherwise every recorded
 * sibling gets its source's mode and mtime (transfers lose them), the
 * artifacts are written (on_artifact) and the parts removed: KILN_OK, or
 * KILN_ERR_IO if an artifact failed (the parts are kept), KILN_ERR_NOMEM.
 * With opt.dry_run, only the checks are made.  Not thread-safe for one run.
 */
kiln_status kiln_merge_tree(struct kiln_run *run, const char *root);

/* ====================================================================
 * Serving (kiln serve)
 * ==================================================================== */

/*
 * A web server for one tree, answering from its manifest alone: each
 * asset's URL path gets the smallest representation the request's
 * Accept-Encoding allows, sent from its file with sendfile(2); nothing the
 * manifest does not list as an asset is ever sent (docs/serving.md, "kiln
 * serve").  It runs on threads of its own from kiln_httpd_start() to
 * kiln_httpd_stop(); the caller only waits (and reloads).  Built without
 * libmicrohttpd (the static binary), kiln_httpd_start() returns
 * KILN_ERR_INVALID, "this kiln was built without kiln serve".
 */
struct kiln_httpd;

struct kiln_httpd_options {
	const char *address;       /* numeric IPv4 or IPv6 address to listen on */
	unsigned port;             /* 0: any free port (kiln_httpd_info() says which) */
	unsigned threads;          /* worker threads; 0: 1 */
	unsigned max_connections;  /* 0: 1024; lowered to what the descriptor
	                              limit allows (kiln_httpd_info() says) */
	unsigned max_per_ip;       /* connections from one address; 0: no limit */
	unsigned timeout;          /* seconds a connection may be idle; 0: 30 */
	bool cache_control;        /* send the snippets' Cache-Control */
	/* The URL path the tree is served at, beginning and ending with '/'
	 * (kiln's --url-prefix); NULL: "/".  Other paths are 404. */
	const char *url_prefix;
	/* At each load, read every recorded file and compare its SHA-256
	 * with the manifest's: a sibling or delta that differs is never sent;
	 * a source that differs is sent as it is, without its siblings. */
	bool verify;
	/* The manifest to serve from, read at each load (kiln's --manifest,
	 * or --artifacts' DIR/kiln-manifest.json); NULL: ROOT's own,
	 * ROOT/kiln-manifest.json.  It must be ROOT's record: one whose
	 * "tree" names another directory is refused. */
	const char *manifest_path;
	/* Where one line per request goes, or -1: "ADDR [DATE] method="M"
	 * uri="U" status=N ce="C" ae="A" ad="D" bytes=B" (D: the request's
	 * Available-Dictionary), bytes outside printable ASCII and '"' '\\'
	 * as \xHH, "-" for none; each line one write(2). */
	int access_log_fd;
};

struct kiln_httpd_info {
	unsigned port;             /* the port listened on */
	size_t assets;             /* the manifest's assets */
	size_t siblings;           /* siblings on disk as recorded */
	size_t deltas;             /* dictionary deltas on disk as recorded */
	size_t missing;            /* recorded files not on disk as recorded: never sent */
	unsigned max_connections;  /* the connection limit in force */
	size_t changed;            /* sources not as recorded (size; with verify,
	                              digest): sent as they are, without siblings */
	unsigned codings;          /* bit set (1u << kiln_coding) of the codings served */
};

/*
 * Load ROOT's manifest (OPT's manifest_path, or ROOT/kiln-manifest.json)
 * and start listening on
 * OPT's address.  KILN_OK with *OUT set; KILN_ERR_IO with *ERR (no
 * manifest, ROOT not a directory, the address cannot be bound: errnum says
 * why); KILN_ERR_INVALID with *ERR (not a manifest kiln reads, another
 * tree's record, a bad address); KILN_ERR_NOMEM.  *ERR's what is a static
 * phrase to print after ROOT.
 */
kiln_status kiln_httpd_start(const char *root, const struct kiln_httpd_options *opt,
			     struct kiln_httpd **out, struct kiln_error *err);

/* What H serves now (the table of its last load).  Thread-safe. */
void kiln_httpd_info(struct kiln_httpd *h, struct kiln_httpd_info *info);

/*
 * Load ROOT's manifest again and switch to it between requests (a request
 * being answered finishes on the file it opened).  With IF_CHANGED, only
 * when the manifest file is another one than the last load's (device,
 * inode, size, mtime).  KILN_OK with *RELOADED saying whether it switched;
 * otherwise the status kiln_httpd_start() would give, with *ERR, and the
 * old table goes on serving.  Thread-safe.
 */
kiln_status kiln_httpd_reload(struct kiln_httpd *h, bool if_changed, bool *reloaded,
			      struct kiln_error *err);

/* Stop accepting connections, give those open up to GRACE_MS milliseconds
 * to finish, then stop and free H (NULL is allowed). */
void kiln_httpd_stop(struct kiln_httpd *h, unsigned grace_ms);

/* ====================================================================
 * Archives
 * ==================================================================== */

/*
 * kiln_run_archive() reads a tree from an archive (or a directory), runs it
 * exactly as kiln_run_tree() would, and writes a new archive holding every
 * original entry plus the siblings, the manifest and the nginx snippet.
 * Archives are read and written with libarchive.
 */
typedef enum kiln_archive_format {
	KILN_ARCHIVE_AUTO = 0, /* from the output name's suffix */
	KILN_ARCHIVE_TAR,      /* POSIX pax (ustar where it suffices), ".tar" */
	KILN_ARCHIVE_TAR_GZ,   /* ... gzip-compressed, ".tar.gz" or ".tgz" */
	KILN_ARCHIVE_TAR_ZST,  /* ... zstd-compressed, ".tar.zst" or ".tzst" */
	KILN_ARCHIVE_TAR_XZ,   /* ... xz-compressed, ".tar.xz" or ".txz" */
	KILN_ARCHIVE_ZIP,      /* zip (deflate), ".zip" */
} kiln_archive_format;

/*
 * Limits and output settings for kiln_run_archive().  Initialise with
 * kiln_archive_options_init(), then change fields.
 */
struct kiln_archive_options {
	kiln_archive_format format; /* output format; default KILN_ARCHIVE_AUTO */
	/* Keep each entry's owner (numeric uid/gid, and the user and group
	 * names an input archive carries) instead of uid 0, gid 0 and no
	 * names.  Default false. */
	bool keep_owner;
	/* Refuse an input archive whose entries hold more than this many bytes
	 * in total once decompressed.  Default 4 GiB; 0 means no limit. */
	uint64_t max_expanded_size;
	/* Refuse an input archive whose entries expand to more than this many
	 * times the bytes read from the archive file, checked once they hold
	 * more than KILN_ARCHIVE_RATIO_FLOOR bytes (a small, very compressible
	 * archive is never refused).  Default 200; 0 means no limit. */
	double max_expansion_ratio;
	/* Refuse an input with more entries than this.  Default 1,000,000
	 * (each entry's metadata is held until the output is written). */
	uint64_t max_entries;
	/* Timestamp (seconds since the epoch) of the entries kiln adds that
	 * have no source (the manifest and snippet) when mtime_set; else the
	 * newest mtime of the input's entries (kiln: SOURCE_DATE_EPOCH). */
	bool mtime_set;
	int64_t mtime;
};

/* Bytes of expanded data below which max_expansion_ratio is not checked. */
#define KILN_ARCHIVE_RATIO_FLOOR ((uint64_t)64 << 20)

/* Fill *aopt with the defaults documented above.  Never fails. */
void kiln_archive_options_init(struct kiln_archive_options *aopt);

/* The format an output named PATH gets: by its suffix (case-sensitive, see
 * kiln_archive_format), or KILN_ARCHIVE_AUTO when the suffix is unknown. */
kiln_archive_format kiln_archive_format_from_name(const char *path);

/* Static name of a format, never NULL: "tar", "tar.gz", "tar.zst",
 * "tar.xz", "zip"; "auto" for KILN_ARCHIVE_AUTO. */
const char *kiln_archive_format_name(kiln_archive_format format);

/*
 * Process INPUT, an archive file (any format and compression libarchive
 * reads except those that reference outside files: tar and pax, zip, 7z,
 * cpio, ISO 9660, xar, rar, cab, lha and ar, with gzip, bzip2, xz, lzma,
 * zstd, lz4, lzip or compress) or a directory (which is only read), and
 * write the archive OUTPUT.
 *
 * Every entry of INPUT is validated and streamed into a private staging
 * directory, ".kiln-stage-XXXXXX" in OUTPUT's directory (mode 0700; data is
 * never held in memory beyond one 64 KiB block), which is then run through
 * the same tree run as kiln_run_tree() with the run's options, so every
 * decision, incremental reuse (an INPUT that holds a previous run's manifest
 * and siblings) and the cache work as for a directory.  The tree is the
 * archive's root, or its single top-level directory when every entry lies
 * below one (so "dist.tar.gz" holding "dist/..." is processed like
 * `kiln dist`).  A directory INPUT is read as if archived with
 * `tar -C PARENT NAME`: its entries are named NAME/..., NAME being its last
 * path component ("." for "." and "/").
 *
 * OUTPUT then holds, sorted bytewise by path: every entry of INPUT with its
 * name, type, permission bits, mtime (nanoseconds), symbolic link target
 * and hard link (within each hard-linked group, the first path carries the
 * data and the others link to it; zip has no hard links, so each carries
 * its data), except a sibling kiln removed as stale and kiln's own
 * temporary files (".kiln-XXXXXX.tmp", left by a killed run); each
 * sibling, with its source's permission bits (mode & 0777) and mtime; the
 * manifest and the snippet at the tree's top (each unless turned off), mode
 * 0644, with aopt->mtime.
 * Owners are uid 0 and gid 0 without names unless aopt->keep_owner; no
 * entry carries an atime, ctime or the current time, and the gzip header of
 * a .tar.gz has MTIME 0, so the same input and options give the same bytes.
 * OUTPUT is written to a temporary file in its directory, fsync'ed and
 * renamed into place: it exists whole or not at all, and is mode 0644 (or
 * the mode of the file it replaces).  A symbolic link, directory or special
 * file at OUTPUT is refused and left alone.
 *
 * Refused (the whole input: no tree run, no OUTPUT), each with one on_file
 * call whose outcome is KILN_OUTCOME_ERROR (status KILN_ERR_UNSAFE or
 * KILN_ERR_INVALID), ROOT = INPUT and PATH = the entry's name: an absolute
 * path; a ".." component; a symbolic link that is absolute or resolves
 * (through the input's own links) outside the tree; a hard link to an entry
 * that is not earlier in the input; two entries with the same path once
 * "." components and repeated slashes are dropped; an entry below a
 * non-directory; a device node, FIFO or socket; an entry larger than the
 * run's max_file_size; more than aopt->max_entries entries; and, for an
 * archive, a total over aopt->max_expanded_size or an expansion over
 * aopt->max_expansion_ratio.  The first refused entry stops reading.
 * OUTPUT is only written when nothing at all failed: any file error of the
 * tree run, removal, cache or artifact failure means no OUTPUT.
 *
 * Callbacks: reports and events of the tree run are passed on with ROOT =
 * INPUT and PATH = the entry's path in INPUT (relative to it, for a
 * directory); in_archive is true when INPUT is an archive.  Event paths
 * inside the tree read "INPUT: ENTRY" (archive) or "INPUT/PATH"
 * (directory).  Problems with INPUT as a whole (unreadable, not an
 * archive, corrupt) are one on_file call with PATH "" and error.what from
 * libarchive (valid only during the call); problems with OUTPUT are one
 * on_artifact call with WHAT "archive", which is also called with ERR NULL
 * once OUTPUT is in place.
 *
 * With opt.dry_run, INPUT is read and staged and the tree run reports what
 * it would do; no OUTPUT is written.  opt.manifest_path and
 * opt.nginx_conf_path must be NULL (the artifacts go inside OUTPUT), and
 * opt.shard_count 0.
 *
 * Returns KILN_OK when OUTPUT was written (or, dry run, would be);
 * KILN_ERR_INVALID for a bad argument (unknown output format, options
 * above, OUTPUT inside a directory INPUT) before anything was read, or,
 * once staged, for an INPUT holding kiln's record of an earlier run when
 * opt.write_manifest is false (as kiln_run_tree());
 * KILN_ERR_UNSAFE when the input was refused; KILN_ERR_IO when something
 * failed (already reported through a callback); KILN_ERR_NOMEM;
 * KILN_ERR_CANCELLED when kiln_run_cancel() was called (no OUTPUT).  The
 * staging directory and temporary output are removed on every return, and
 * by kiln_run_remove_temps() from another thread.  Disk use is about the
 * expanded input, its siblings and OUTPUT at once.  Not thread-safe for one
 * run.
 */
kiln_status kiln_run_archive(struct kiln_run *run, const char *input, const char *output,
			     const struct kiln_archive_options *aopt);

/* ====================================================================
 * Names and versions
 * ==================================================================== */

/* Default names of the artifacts at a tree's top, never taken for inputs
 * there (nor are "kiln.caddy.conf" and "kiln.apache.conf"). */
#define KILN_MANIFEST_NAME "kiln-manifest.json"
#define KILN_NGINX_CONF_NAME "kiln.nginx.conf"
#define KILN_NGINX_HTTP_CONF_NAME "kiln.nginx.http.conf"

/* The servers kiln writes snippets for, as --server names them: static
 * "nginx", "caddy", "apache" for I < kiln_server_count(), then NULL. */
unsigned kiln_server_count(void);
const char *kiln_server_name(unsigned i);

/* True if the base name of PATH carries a content hash as bundlers write
 * one by the rule on the name alone ("main.3f9a2c7b1d4e.chunk.js",
 * "index-B2x9_kQ1.js", "styles.KZ3T4RBF.css"; not "jquery-3.7.1.min.js",
 * "favicon-32x32.png"): docs/cache-control.md, lib/fingerprint.c.
 * A tree run has more evidence (kiln_options.cache_control).  Pure. */
bool kiln_fingerprinted(const char *path);

/* Static names, never NULL: "compressed", "sibling", "excluded", "media",
 * "small", "no-gain", "long-name", "symlink", "special", "error" ("?" out
 * of range). */
const char *kiln_outcome_name(kiln_outcome outcome);

/* Static text for an event, e.g. "stale sibling" ("?" out of range). */
const char *kiln_event_name(kiln_event event);

/* The coding's IANA token and sibling suffix (kiln_coding_info()'s name and
 * suffix), or "?" and "" when C is out of range. */
const char *kiln_coding_name(kiln_coding c);
const char *kiln_coding_suffix(kiln_coding c);

/*
 * Length in bytes (1..4) of the well-formed UTF-8 sequence at the start of
 * the NUL-terminated string S (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF), or 0 if S starts with a byte that does not begin
 * one (or with NUL).  Used to escape names for messages and the manifest.
 */
size_t kiln_utf8_len(const char *s);

/*
 * PATH in the form the manifest gives file names (docs/manifest.md, "The
 * manifest"), for any machine-readable output: every '%' and every byte that
 * is not part of a well-formed UTF-8 sequence becomes "%XX" (uppercase hex),
 * the rest is PATH itself, so the result is valid UTF-8 and one-to-one.
 * Returns a malloc'ed string (NULL when out of memory); *BASE64, when not
 * NULL, is set to a malloc'ed base64 of PATH's exact bytes if the result is
 * not PATH itself, NULL otherwise.
 */
char *kiln_path_key(const char *path, char **base64);

/*
 * The shard (1..COUNT) of the file at relative path REL (as the manifest
 * names it): FNV-1a 64 (offset basis 14695981039346656037, prime
 * 1099511628211) of REL's bytes, modulo COUNT, plus 1; 0 when COUNT is 0.
 * A file keeps its shard as the tree changes.  Thread-safe.
 */
unsigned kiln_shard_of(const char *rel, unsigned count);

/* kiln's version, KILN_VERSION_STRING.  Static. */
const char *kiln_version(void);

/*
 * The libraries kiln encodes, decodes and archives with, and their
 * versions as the library itself reports them at run time (or, where it has
 * no such call, as its headers said when kiln was built), then in the
 * WebAssembly build the runtime it runs on ("emscripten", "3.1.6,
 * WebAssembly, Node.js v20.19.0"): for I = 0, 1, ... sets *name and
 * *version (static strings) and returns true, then false past the last.
 * Thread-safe.
 */
bool kiln_library(size_t i, const char **name, const char **version);

#ifdef __cplusplus
}
#endif
#endif /* KILN_H */
