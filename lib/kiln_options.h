/*
 * kiln_options.h - struct kiln_options, what shapes a run: each field with
 * its default and its rule.  Part of the public interface: include kiln.h,
 * which includes this file after the types and codings it uses and
 * declares the functions that take it.
 */
#ifndef KILN_OPTIONS_H
#define KILN_OPTIONS_H

#ifndef KILN_H
#error "include kiln.h, not kiln_options.h"
#endif

/* Options that shape a run.  Initialise with kiln_options_init(), then change
 * fields.  The library copies what it needs in kiln_run_new(); the caller
 * keeps ownership of the strings and arrays and may free them afterwards. */
struct kiln_options {
	/* Bit set of (1u << kiln_coding); default: those default_on. */
	unsigned codings;
	/* Per coding, its level or quality, within the coding's
	 * [level_min, level_max]; default level_default. */
	int level[KILN_MAX_CODINGS];
	/* Per coding that has one, its second encoder setting
	 * (kiln_coding_info.extra_*): 0 (the default) is off, else within
	 * [extra_min, extra_max]. */
	int extra[KILN_MAX_CODINGS];
	uint64_t min_size; /* files smaller than this are "small"; default 256 */
	/* A sibling is kept only if its size <= max_ratio * source size and
	 * strictly below the source size; 0 < max_ratio <= 1, default 0.95.
	 * The refinements that follow from how servers build Vary and ETag are
	 * in lib/decide.c: beside any other kept sibling, the first coding's
	 * is kept whenever it is smaller than the source at all; no two of a
	 * file and its kept siblings have the same size. */
	double max_ratio;
	/* fnmatch(3) globs matched against the path relative to the tree root
	 * (components joined by '/').  A glob containing '/' is matched against
	 * the whole relative path and '*' also matches '/'; a glob without '/'
	 * is matched against the file name alone; a leading "./" is ignored.
	 * A file matching any exclude glob, or matching no include glob when
	 * there are any, is excluded (and, with a manifest, still hashed and
	 * listed as skipped "excluded"). */
	const char *const *include;
	size_t n_include;
	const char *const *exclude;
	size_t n_exclude;
	/* Follow symbolic links to files whose resolved target is inside the
	 * tree (the sibling is written next to the link); a link outside the
	 * tree, a dangling link or a loop is an error; links to directories are
	 * not descended (their targets are walked at their own paths).  Default
	 * false: links are reported as KILN_OUTCOME_SYMLINK and left alone. */
	bool follow_symlinks;
	/* Decode every kept sibling with an independent decoder and compare it
	 * with the source before it is written. */
	bool verify;
	/* Decide, encode (in memory) and report, but write nothing: no sibling,
	 * manifest, snippet or cache entry; nothing removed. */
	bool dry_run;
	/* Worker threads; 0 means the number of online CPUs. */
	unsigned jobs;
	/* Keep the manifest, written after each tree to manifest_path, or
	 * ROOT/KILN_MANIFEST_NAME when that is NULL (format: docs/manifest.md, "The
	 * manifest").  Default true.  It is kiln's record of what it wrote:
	 * incremental runs, stale-sibling removal, kiln_check_tree() and
	 * kiln_clean_tree() read it back.  Without it (false) kiln keeps no
	 * record, so a tree that has one from an earlier run is refused
	 * (KILN_ERR_INVALID): the record would go out of date. */
	bool write_manifest;
	const char *manifest_path;
	/* Servers to write snippets for (README.md, "Serving"), generated
	 * from the tree's records into ROOT: bit I for kiln_server_name(I);
	 * default nginx's alone.  NGINX_CONF_PATH: nginx's first file there
	 * instead, its http {} file beside it (".conf" -> ".http.conf");
	 * CADDY_CONF_PATH, APACHE_CONF_PATH: those servers' snippets there.
	 * A path given here (or as MANIFEST_PATH) names kiln's file: one that
	 * exists and is not the snippet kiln writes there (or, for
	 * MANIFEST_PATH, a kiln manifest) is never replaced, and no two of
	 * these name one file; kiln_run_tree() refuses the tree
	 * (docs/guarantees.md). */
	unsigned servers;
	const char *nginx_conf_path;
	const char *caddy_conf_path;
	const char *apache_conf_path;
	/* The nginx that serves the tree loads the static modules that are not
	 * part of nginx's own build (brotli_static, Debian's
	 * libnginx-mod-http-brotli-static).  Default false.  The nginx snippet
	 * lets nginx's static modules send the siblings, at about gzip_static's
	 * cost per request, when every coding of the run has one (gzip alone
	 * needs none loaded apart; gzip and br need this) and the run made no
	 * dictionary delta; otherwise it negotiates with the rewrite module
	 * (docs/serving.md, "nginx"). */
	bool nginx_static_modules;
	/* A directory for kiln's own files, so that none is in the tree (a
	 * static host publishes everything there): the manifest (unless
	 * MANIFEST_PATH names one) and every chosen server's snippet files
	 * (unless their *_CONF_PATH names one) go there under their default
	 * names, as if given by those options; the manifest records where
	 * the tree is, so later runs, check, clean and merge given the same
	 * ARTIFACTS_DIR find the tree's state there.  With kiln_run_archive()
	 * they are written there instead of into the output archive.  The
	 * directory must exist.  Default NULL: at the tree's top. */
	const char *artifacts_dir;
	const char *url_prefix; /* served at this URL path ('/' first and last; "/") */
	/* Cache-Control in the snippets (default true): "public,
	 * max-age=31536000, immutable" (RFC 8246) for the files the evidence
	 * proves fingerprinted (docs/cache-control.md, "Cache-Control": the name, the
	 * bundler's manifest at the tree's top or in FINGERPRINTS, the names of
	 * the PREVIOUS releases, the tree's names) and those matching an
	 * IMMUTABLE glob (include's rules), none matching a MUTABLE_GLOBS glob;
	 * the manifest says why ("immutable"); "no-cache" (RFC 9111) else. */
	bool cache_control;
	const char *const *immutable;
	size_t n_immutable;
	const char *const *mutable_globs;
	size_t n_mutable;
	const char *const *fingerprints;
	size_t n_fingerprints;
	/* Ignore what earlier runs left about contents: encode every file again
	 * (siblings they recorded are still removed when stale); and run even
	 * when the globs exclude every file that has siblings (see
	 * kiln_run_tree()). */
	bool force;
	/* Read every file, and (check) decode every sibling, instead of
	 * trusting the index kept beside the manifest: otherwise a file whose
	 * device, inode, mode, size, mtime and ctime are what the index
	 * recorded is taken to hold the bytes the manifest records, unread
	 * (docs/reruns.md, "What a re-run reads").  Content still decides: a
	 * file read and found unchanged is not encoded again.  Default false. */
	bool reread;
	/* One kiln at a time changes a tree (docs/guarantees.md): compress,
	 * clean and merge hold an exclusive flock(2) on ROOT's directory
	 * while they run, and one that finds it held waits
	 * (KILN_EVENT_WAITING), or with NO_WAIT fails at once with
	 * KILN_ERR_BUSY, nothing done.  Default false. */
	bool no_wait;
	/* A content cache directory kept between runs, or NULL.  Entries are
	 * keyed by source SHA-256, coding and encoder recipe (encoder, version,
	 * level); a hit is checked by its own SHA-256 and by decoding it
	 * against the source, and a bad entry is a miss.  Safe for concurrent
	 * processes.  Kept under cache_max_size bytes (default 1 GiB) by
	 * evicting the least recently used entries at the end of each tree;
	 * failing to write an entry is an error (KILN_EVENT_CACHE_FAILED).
	 * A cache directory inside the tree is never walked (matched by device
	 * and inode): its entries are no assets. */
	const char *cache_dir;
	uint64_t cache_max_size;
	/* Files to compress larger than this are refused (an error for that
	 * file).  Default 0: no limit. */
	uint64_t max_file_size;
	/* Files of at least this many bytes are encoded streaming: read once,
	 * in 1 MiB chunks, into every coding's streaming encoder at once, each
	 * writing straight into its sibling's temporary file, so memory is the
	 * encoders' own whatever the file's size (a coding whose whole-buffer
	 * encoder cannot stream uses another, its recipe says which:
	 * docs/performance.md,
	 * "Memory and large files").  Streamed files bypass the cache; a dry
	 * run does not verify them.  Smaller files are held in memory with
	 * their encodings: peak memory about jobs * 3 * stream_size plus the
	 * encoders' own.  Default 64 MiB; 0 means never stream. */
	uint64_t stream_size;
	/*
	 * Dictionary deltas (RFC 9842; docs/dictionary-deltas.md, "Dictionary
	 * deltas"): earlier
	 * releases of the tree as deployed (directories, or deploy archives
	 * read as kiln_run_archive() reads its input), newest first, at
	 * most KILN_MAX_PREVIOUS.  A fingerprinted asset (as cache_control
	 * says) whose family -- its path with the fingerprint replaced by '*'
	 * -- has a member with other bytes in one of them gets a "dcz" sibling
	 * NAME.<16 hex digits of the member's SHA-256>.dcz per such member,
	 * encoded against it, kept only if smaller than every other sibling
	 * of the file (and within max_ratio); the manifest records each
	 * ("dictionaries") and the snippets serve it to a client that offers
	 * that dictionary.  Every file so named that the run does not vouch
	 * for is removed, whoever wrote it.  A release that cannot be read is
	 * reported through on_file (ROOT its path, PATH "") and fails the
	 * tree (KILN_ERR_IO), its deltas left out.  Default none.
	 */
	const char *const *previous;
	size_t n_previous;
	/* fsync(2) every sibling, manifest and cache entry before its rename,
	 * and its directory after (power loss).  Default false. */
	bool fsync;
	/* Shard K of N (1 <= K <= N <= KILN_MAX_SHARDS; needs write_manifest);
	 * N 0, the default: the whole tree.  See kiln_run_tree(), "Shards". */
	unsigned shard_index, shard_count;
};

#define KILN_MAX_SHARDS 65536 /* the largest shard count */
#define KILN_MAX_PREVIOUS 8   /* at most this many kiln_options.previous */

#endif /* KILN_OPTIONS_H */
