/*
 * run.c - a run: options, the per-tree plan, and the work done per file.
 *
 * kiln_run_tree() walks the tree (walk.c), reports what the walk already
 * decided, sorts the candidates largest first and lets kiln_pool_run() work
 * through them (the threading is described in pool.c).  For each candidate,
 * process_file() applies the remaining outcome rules in order (media by
 * magic bytes or extension, small), encodes, decides which siblings to keep,
 * verifies, and hands the kept ones to the atomic writer (sibling.c).
 */
#include "run.h"

#include "classify.h"
#include "codec.h"
#include "decide.h"
#include "hash.h"
#include "manifest.h"
#include "pool.h"
#include "snippet.h"
#include "source.h"
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void kiln_options_init(struct kiln_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->codings = 1u << KILN_CODING_GZIP;
	opt->gzip_level = 12;
	opt->brotli_quality = 11;
	opt->min_size = 256;
	opt->max_ratio = 0.95;
	opt->write_manifest = true;
	opt->write_nginx_conf = true;
	opt->cache_max_size = (uint64_t)1 << 30;
	opt->stream_size = (uint64_t)64 << 20;
}

kiln_status kiln_options_check(const struct kiln_options *opt, const char **field)
{
	const char *bad = NULL;

	if (opt->codings == 0 || (opt->codings & ~((1u << KILN_NCODINGS) - 1)))
		bad = "codings";
	else if (opt->gzip_level < 1 || opt->gzip_level > 12)
		bad = "gzip_level";
	else if (opt->brotli_quality < 0 || opt->brotli_quality > 11)
		bad = "brotli_quality";
	else if (!(opt->max_ratio > 0.0 && opt->max_ratio <= 1.0))
		bad = "max_ratio";
	if (field)
		*field = bad;
	return bad ? KILN_ERR_INVALID : KILN_OK;
}

static unsigned online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 1024 ? 1024 : (unsigned)n;
}

struct kiln_run *kiln_run_new(const struct kiln_options *opt, const struct kiln_callbacks *cb)
{
	struct kiln_run *run;
	size_t nglobs = opt->n_include + opt->n_exclude;

	if (kiln_options_check(opt, NULL) != KILN_OK || kiln_hash_init() != KILN_OK)
		return NULL;
	run = calloc(1, sizeof(*run));
	if (!run)
		return NULL;
	run->opt = *opt;
	if (cb)
		run->cb = *cb;
	pthread_mutex_init(&run->cb_lock, NULL);
	kiln_archive_temps_init(&run->archive_temps);
	run->journal.fd = -1;
	run->nworkers = opt->jobs ? opt->jobs : online_cpus();
	run->workers = calloc(run->nworkers, sizeof(*run->workers));
	for (unsigned w = 0; run->workers && w < run->nworkers; w++)
		kiln_tempslot_init(&run->workers[w].slot);
	run->globs = calloc(nglobs + 1, sizeof(char *));
	if (!run->workers || !run->globs)
		goto fail;
	for (size_t i = 0; i < nglobs; i++) {
		const char *g = i < opt->n_include ? opt->include[i]
						   : opt->exclude[i - opt->n_include];
		if (!(run->globs[i] = strdup(g)))
			goto fail;
	}
	run->opt.include = (const char *const *)run->globs;
	run->opt.exclude = (const char *const *)run->globs + opt->n_include;
	{
		const char **strs[] = { &run->opt.manifest_path, &run->opt.nginx_conf_path,
					&run->opt.cache_dir };
		for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
			if (!*strs[i])
				continue;
			if (!(run->owned[i] = strdup(*strs[i])))
				goto fail;
			*strs[i] = run->owned[i];
		}
	}
	return run;
fail:
	kiln_run_free(run);
	return NULL;
}

void kiln_run_free(struct kiln_run *run)
{
	if (!run)
		return;
	for (unsigned w = 0; run->workers && w < run->nworkers; w++) {
		for (int c = 0; c < KILN_NCODINGS; c++)
			if (run->workers[w].codec_state[c])
				kiln_codecs[c]->state_free(run->workers[w].codec_state[c]);
		kiln_tempslot_destroy(&run->workers[w].slot);
	}
	for (size_t i = 0; run->globs && run->globs[i]; i++)
		free(run->globs[i]);
	free(run->globs);
	for (size_t i = 0; i < sizeof(run->owned) / sizeof(run->owned[0]); i++)
		free(run->owned[i]);
	free(run->workers);
	kiln_cache_close(run->cache);
	kiln_state_free(&run->state);
	pthread_mutex_destroy(&run->cb_lock);
	kiln_archive_temps_destroy(&run->archive_temps);
	free(run);
}

void kiln_run_cancel(struct kiln_run *run)
{
	atomic_store(&run->cancelled, 1);
}

void kiln_run_remove_temps(struct kiln_run *run)
{
	for (unsigned w = 0; w < run->nworkers; w++)
		kiln_tempslot_shutdown(&run->workers[w].slot);
	kiln_archive_temps_shutdown(&run->archive_temps);
}

void kiln_run_report(struct kiln_run *run, const struct kiln_report *r)
{
	if (!run->cb.on_file)
		return;
	pthread_mutex_lock(&run->cb_lock);
	run->cb.on_file(run->cb.user, r);
	pthread_mutex_unlock(&run->cb_lock);
}

static void report_error(struct kiln_report *r, kiln_status st, int errnum,
			 const char *what, const char *suffix)
{
	r->outcome = KILN_OUTCOME_ERROR;
	r->error.status = st;
	r->error.errnum = errnum;
	r->error.what = what;
	r->error.suffix = suffix;
}

char *kiln_run_join(const char *root, const char *rel, const char *suffix)
{
	size_t a = strlen(root), b = strlen(rel), c = strlen(suffix);
	char *p = malloc(a + b + c + 2);

	if (p) {
		memcpy(p, root, a);
		p[a] = '/';
		memcpy(p + a + 1, rel, b);
		memcpy(p + a + 1 + b, suffix, c + 1);
	}
	return p;
}

void kiln_run_event(struct kiln_run *run, kiln_event ev, const char *path, int coding,
		    const struct kiln_error *err)
{
	if (!run->cb.on_event)
		return;
	pthread_mutex_lock(&run->cb_lock);
	run->cb.on_event(run->cb.user, ev, path, coding, err);
	pthread_mutex_unlock(&run->cb_lock);
}

bool kiln_run_file_sha256(const char *path, uint8_t out[32])
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct kiln_error err;
	uint8_t sha384[48];
	struct stat st;
	bool ok;

	if (fd < 0)
		return false;
	ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	     kiln_source_hash(fd, &st, out, sha384, &err) == KILN_OK;
	close(fd);
	return ok;
}

/*
 * A sibling kiln recorded (PREV, with its size and SHA-256) that should no
 * longer exist: remove it if it is still what kiln wrote, else leave it and
 * say so.  Nothing is removed in a dry run.
 */
void kiln_run_remove_recorded(struct kiln_run *run, const char *root, const char *rel,
			      kiln_coding c, const struct kiln_prev_coding *prev)
{
	char *sib = kiln_run_join(root, rel, kiln_codecs[c]->suffix);
	uint8_t sha[32];
	struct stat st;

	if (!sib)
		return;
	if (lstat(sib, &st) != 0) {
		free(sib);
		return; /* already gone */
	}
	if (!S_ISREG(st.st_mode) || !kiln_run_file_sha256(sib, sha) ||
	    !(((uint64_t)st.st_size == prev->size && memcmp(sha, prev->sha256, 32) == 0) ||
	      (prev->alt && (uint64_t)st.st_size == prev->alt_size &&
	       memcmp(sha, prev->alt_sha256, 32) == 0))) {
		kiln_run_event(run, KILN_EVENT_FOREIGN, sib, (int)c, NULL);
	} else if (!run->opt.dry_run && unlink(sib) != 0) {
		struct kiln_error err = { KILN_ERR_IO, errno, "cannot remove stale sibling", "" };
		kiln_run_event(run, KILN_EVENT_REMOVE_FAILED, sib, (int)c, &err);
		run->remove_failed = true;
	} else {
		kiln_run_event(run, KILN_EVENT_REMOVED, sib, (int)c, NULL);
	}
	free(sib);
}

/*
 * Coding C of entry REL gets no sibling this run: remove the one the previous
 * run wrote, or point out one kiln never wrote (nginx would serve it).
 */
void kiln_run_no_sibling(struct kiln_run *run, const struct kiln_prev_entry *prev,
			 const char *rel, kiln_coding c)
{
	struct stat st;
	char *sib;

	if (prev && prev->coding[c].kept) {
		kiln_run_remove_recorded(run, run->root, rel, c, &prev->coding[c]);
		return;
	}
	if (!(run->opt.codings & (1u << c)) || !(sib = kiln_run_join(run->root, rel, kiln_codecs[c]->suffix)))
		return;
	if (lstat(sib, &st) == 0)
		kiln_run_event(run, KILN_EVENT_FOREIGN, sib, (int)c, NULL);
	free(sib);
}

bool kiln_run_previous_ok(struct kiln_run *run, const struct kiln_entry *e,
			  const struct kiln_prev_coding *prev, kiln_coding c,
			  const struct stat *src_st, const uint8_t *src, int src_fd)
{
	char *sib = kiln_run_join(run->root, e->rel, kiln_codecs[c]->suffix);
	struct timespec times[2] = { src_st->st_atim, src_st->st_mtim };
	struct stat st;
	bool ok = false;
	int fd;

	if (!sib)
		return false;
	fd = open(sib, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != prev->size)
		goto out;
	if (run->opt.verify && !src &&
	    kiln_codecs[c]->verify_fd(fd, (uint64_t)st.st_size, src_fd,
				      (uint64_t)src_st->st_size) != KILN_OK)
		goto out;
	if (run->opt.verify && src) {
		uint8_t *buf = NULL;
		struct kiln_error err;
		bool good = kiln_source_read(fd, &st, &buf, &err) == KILN_OK &&
			    kiln_codecs[c]->verify(buf, (size_t)st.st_size, src,
						   (size_t)src_st->st_size) == KILN_OK;
		free(buf);
		if (!good)
			goto out;
	}
	ok = true;
	if (run->opt.dry_run)
		goto out;
	if ((st.st_mode & 0777) != (src_st->st_mode & 0777))
		fchmod(fd, src_st->st_mode & 0777);
	if (st.st_mtim.tv_sec != src_st->st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != src_st->st_mtim.tv_nsec)
		futimens(fd, times); /* a touched source: same Last-Modified again */
out:
	if (fd >= 0)
		close(fd);
	free(sib);
	return ok;
}

/* Get coding C of SRC into *out: from the cache, else by encoding (and then
 * into the cache).  Sets *origin.  On failure fills *r's error. */
static kiln_status obtain(struct kiln_run *run, struct worker *wk, kiln_coding c,
			  const uint8_t *src, size_t size, const uint8_t sha[32], uint8_t **out,
			  size_t *out_len, kiln_origin *origin, struct kiln_report *r)
{
	const struct kiln_options *opt = &run->opt;
	const struct kiln_codec *codec = kiln_codecs[c];
	char *cpath = NULL;
	size_t cap;
	kiln_status s;

	if (run->cache) {
		int param = c == KILN_CODING_GZIP ? opt->gzip_level : opt->brotli_quality;
		const char *ver = c == KILN_CODING_GZIP ? kiln_libdeflate_version()
							: kiln_brotli_version();
		cpath = kiln_cache_path(run->cache, sha, c, param, ver);
		/* a hit is decoded against the source before it is trusted */
		if (cpath && kiln_cache_get(run->cache, cpath, out, out_len)) {
			if (codec->verify(*out, *out_len, src, size) == KILN_OK) {
				*origin = KILN_ORIGIN_CACHE;
				free(cpath);
				return KILN_OK;
			}
			free(*out);
			*out = NULL;
			unlink(cpath);
		}
	}
	*origin = KILN_ORIGIN_ENCODER;
	if (!wk->codec_state[c] && !(wk->codec_state[c] = codec->state_new(opt))) {
		report_error(r, KILN_ERR_NOMEM, ENOMEM, "cannot allocate encoder", "");
		goto fail;
	}
	cap = codec->bound(size);
	if (!(*out = malloc(cap))) {
		report_error(r, KILN_ERR_NOMEM, ENOMEM, "out of memory", "");
		goto fail;
	}
	s = codec->encode(wk->codec_state[c], src, size, *out, cap, out_len);
	if (s != KILN_OK || *out_len == 0) {
		report_error(r, s ? s : KILN_ERR_ENCODER, s == KILN_ERR_NOMEM ? ENOMEM : 0,
			     "encoder failed", codec->suffix);
		goto fail;
	}
	if (cpath && !opt->dry_run) {
		struct kiln_error err = { 0 };
		if (kiln_cache_put(run->cache, cpath, *out, *out_len, opt->fsync, &wk->slot, &err) != KILN_OK) {
			kiln_run_event(run, KILN_EVENT_CACHE_FAILED, cpath, (int)c, &err);
			run->cache_failed = true;
		}
	}
	free(cpath);
	return KILN_OK;
fail:
	free(*out);
	*out = NULL;
	free(cpath);
	return r->error.status;
}

void kiln_run_undo_written(struct kiln_run *run, const char *rel,
			   const bool written[KILN_NCODINGS], const struct kiln_report *r)
{
	/* a file that failed gets no siblings from this run: one written before
	 * another failed would be served by nginx yet be in no manifest */
	for (int c = 0; c < KILN_NCODINGS && r->outcome == KILN_OUTCOME_ERROR; c++) {
		char *sib;
		if (!written[c] || !(sib = kiln_run_join(run->root, rel, kiln_codecs[c]->suffix)))
			continue;
		if (unlink(sib) == 0)
			kiln_run_event(run, KILN_EVENT_REMOVED, sib, c, NULL);
		free(sib);
	}
}

void kiln_run_drop_outdated(struct kiln_run *run, const struct kiln_prev_entry *prev, bool reuse,
			    const char *rel, const struct kiln_report *r)
{
	/* failed on new content: the siblings kiln wrote for the old content
	 * must not outlive it, or nginx would serve them */
	for (int c = 0; c < KILN_NCODINGS && r->outcome == KILN_OUTCOME_ERROR; c++)
		if (prev && !reuse && prev->coding[c].kept && r->coding[c].outcome != KILN_CODING_KEPT &&
		    r->error.status != KILN_ERR_UNSAFE)
			kiln_run_remove_recorded(run, run->root, rel, (kiln_coding)c, &prev->coding[c]);
}

/*
 * Encode (or reuse), decide, verify and write the siblings of SRC.  PREV is
 * the previous run's entry for this path (what kiln wrote there); REUSE says
 * its content is this very content, so its results may be reused.
 */
static void compress_file(struct kiln_run *run, struct worker *wk, const struct kiln_entry *e,
			  const struct kiln_prev_entry *prev, bool reuse, int fd,
			  const struct stat *st, const uint8_t *src, struct kiln_report *r)
{
	const struct kiln_options *opt = &run->opt;
	size_t size = (size_t)st->st_size, enc_len[KILN_NCODINGS] = { 0 };
	uint8_t *enc[KILN_NCODINGS] = { 0 };
	bool keep[KILN_NCODINGS] = { 0 }, have_prev[KILN_NCODINGS] = { 0 };
	bool written[KILN_NCODINGS] = { 0 };
	kiln_origin origin[KILN_NCODINGS] = { 0 };

	/* what the previous run already knows about this very content */
	for (int c = 0; c < KILN_NCODINGS; c++) {
		const struct kiln_prev_coding *pc = prev && reuse ? &prev->coding[c] : NULL;
		if (!(opt->codings & (1u << c)) || !pc ||
		    !kiln_state_coding_reusable(&run->state, opt, (kiln_coding)c))
			continue;
		if (pc->kept)
			have_prev[c] = kiln_run_previous_ok(run, e, pc, (kiln_coding)c, st, src, fd);
		else
			have_prev[c] = pc->tried;
		if (have_prev[c])
			enc_len[c] = (size_t)pc->size;
	}
	for (int c = 0; c < KILN_NCODINGS; c++) {
		if (!(opt->codings & (1u << c)) || have_prev[c])
			continue;
		if (obtain(run, wk, (kiln_coding)c, src, size, r->sha256, &enc[c], &enc_len[c],
			   &origin[c], r) != KILN_OK)
			goto out;
	}
	kiln_decide(opt, r->size, enc_len, keep);
	for (int c = 0; c < KILN_NCODINGS; c++) {
		if (opt->codings & (1u << c)) {
			r->coding[c].outcome = KILN_CODING_NO_GAIN;
			r->coding[c].size = enc_len[c];
		}
		/* kept now, but only its size was known: get the bytes */
		if (keep[c] && !enc[c] && !(have_prev[c] && prev->coding[c].kept) &&
		    obtain(run, wk, (kiln_coding)c, src, size, r->sha256, &enc[c], &enc_len[c],
			   &origin[c], r) != KILN_OK)
			goto out;
	}

	for (int c = 0; c < KILN_NCODINGS; c++) {
		kiln_status s;
		if (!keep[c] || !enc[c])
			continue;
		s = opt->verify ? kiln_codecs[c]->verify(enc[c], enc_len[c], src, size) : KILN_OK;
		if (s != KILN_OK) {
			report_error(r, s, s == KILN_ERR_NOMEM ? ENOMEM : 0,
				     s == KILN_ERR_VERIFY ? "sibling does not decode to its source"
							  : "cannot verify sibling",
				     kiln_codecs[c]->suffix);
			goto out;
		}
		if (run->hashing && kiln_sha256(enc[c], enc_len[c], r->coding[c].sha256) != KILN_OK) {
			report_error(r, KILN_ERR_NOMEM, ENOMEM, "cannot hash", kiln_codecs[c]->suffix);
			goto out;
		}
	}
	if (!kiln_source_unchanged(fd, st)) {
		report_error(r, KILN_ERR_CHANGED, 0, "file changed while being compressed", "");
		goto out;
	}
	/* every new sibling's path is checked before the first is written, so
	 * that a refusal never leaves the file with half its siblings (a dry
	 * run finds here what would stop the real one) */
	for (int c = 0; c < KILN_NCODINGS; c++) {
		char *sib;
		if (!keep[c] || !enc[c])
			continue;
		if (!(sib = kiln_run_join(run->root, e->rel, kiln_codecs[c]->suffix))) {
			report_error(r, KILN_ERR_NOMEM, ENOMEM, "out of memory", kiln_codecs[c]->suffix);
			goto out;
		}
		if (kiln_sibling_check(sib, st, &r->error) != KILN_OK) {
			free(sib);
			r->outcome = KILN_OUTCOME_ERROR;
			r->error.suffix = kiln_codecs[c]->suffix;
			goto out;
		}
		free(sib);
	}

	r->outcome = KILN_OUTCOME_NO_GAIN;
	for (int c = 0; c < KILN_NCODINGS; c++) {
		const char *suffix = kiln_codecs[c]->suffix;
		kiln_status s;
		char *sib;
		if (!keep[c]) {
			kiln_run_no_sibling(run, prev, e->rel, (kiln_coding)c);
			continue;
		}
		if (!enc[c]) { /* the previous run's sibling, checked above */
			r->coding[c].origin = KILN_ORIGIN_PREVIOUS;
			memcpy(r->coding[c].sha256, prev->coding[c].sha256, 32);
		} else if (!opt->dry_run) {
			if (atomic_load(&run->cancelled)) {
				report_error(r, KILN_ERR_CANCELLED, 0, "cancelled", "");
				goto out;
			}
			if (!(sib = kiln_run_join(run->root, e->rel, suffix))) {
				report_error(r, KILN_ERR_NOMEM, ENOMEM, "out of memory", suffix);
				goto out;
			}
			s = kiln_sibling_write(&wk->slot, sib, enc[c], enc_len[c], st, opt->fsync,
					       &r->error);
			free(sib);
			if (s != KILN_OK) {
				r->outcome = KILN_OUTCOME_ERROR;
				r->error.suffix = suffix;
				goto out;
			}
			r->coding[c].origin = origin[c];
			written[c] = true;
			kiln_journal_add(&run->journal, e->rel, (kiln_coding)c, enc_len[c],
					 r->coding[c].sha256);
		} else {
			r->coding[c].origin = origin[c]; /* a dry run, checked above */
		}
		r->coding[c].outcome = KILN_CODING_KEPT;
		r->outcome = KILN_OUTCOME_COMPRESSED;
	}
out:
	kiln_run_undo_written(run, e->rel, written, r);
	kiln_run_drop_outdated(run, prev, reuse, e->rel, r);
	for (int c = 0; c < KILN_NCODINGS; c++)
		free(enc[c]);
}

/*
 * Decide one file the walk left open (or excluded, when it still has to be
 * hashed for the manifest), and fill *R with the outcome.
 */
static void process_file(struct kiln_run *run, struct worker *wk, const struct kiln_entry *e,
			 struct kiln_report *r)
{
	const struct kiln_options *opt = &run->opt;
	uint8_t head[KILN_MAGIC_BYTES], *src = NULL;
	const struct kiln_prev_entry *prev = kiln_state_find(&run->state, e->rel);
	char *path = kiln_run_join(run->root, e->rel, "");
	struct stat st;
	ssize_t nhead;
	int fd = -1;

	if (!path) {
		report_error(r, KILN_ERR_NOMEM, ENOMEM, "out of memory", "");
		goto out;
	}
	fd = kiln_source_open(path, e->via_link, &e->st, &st, &r->error);
	if (fd < 0) {
		r->outcome = KILN_OUTCOME_ERROR;
		goto out;
	}
	r->size = (uint64_t)st.st_size;
	if (e->outcome == KILN_OUTCOME_EXCLUDED) {
		r->outcome = KILN_OUTCOME_EXCLUDED;
	} else {
		nhead = kiln_source_head(fd, head, sizeof(head));
		if (nhead < 0) {
			report_error(r, KILN_ERR_IO, errno, "cannot read", "");
			goto out;
		}
		if (kiln_media_extension(e->rel) || kiln_media_magic(head, (size_t)nhead))
			r->outcome = KILN_OUTCOME_MEDIA;
		else if (r->size < opt->min_size)
			r->outcome = KILN_OUTCOME_SMALL;
	}
	if (r->outcome != KILN_OUTCOME_CANDIDATE) {
		/* not compressed: hash it in chunks if the manifest needs it */
		if (run->hashing) {
			if (kiln_source_hash(fd, &st, r->sha256, r->sha384, &r->error) != KILN_OK) {
				r->outcome = KILN_OUTCOME_ERROR;
				goto out;
			}
			r->hashed = true;
		}
		for (int c = 0; c < KILN_NCODINGS; c++)
			kiln_run_no_sibling(run, prev, e->rel, (kiln_coding)c);
		goto out;
	}
	if (opt->max_file_size && r->size > opt->max_file_size) {
		report_error(r, KILN_ERR_INVALID, EFBIG, "larger than --max-file-size, not compressed", "");
		goto out;
	}
	if (opt->stream_size && r->size >= opt->stream_size) {
		kiln_stream_file(run, &wk->slot, e, prev, fd, &st, r);
		goto out;
	}
	if (kiln_source_read(fd, &st, &src, &r->error) != KILN_OK) {
		r->outcome = KILN_OUTCOME_ERROR;
		goto out;
	}
	/* hashed even without a manifest when the content may be reused */
	if (run->hashing || prev || run->cache) {
		struct kiln_hasher *h = kiln_hasher_new();
		if (h)
			kiln_hasher_update(h, src, (size_t)st.st_size);
		if (!h || kiln_hasher_final(h, r->sha256, r->sha384) != KILN_OK) {
			report_error(r, KILN_ERR_NOMEM, ENOMEM, "cannot hash", "");
			goto out;
		}
		r->hashed = true;
	}
	/* changed content or --force: nothing to reuse, but what kiln wrote
	 * before is still known, for removal */
	compress_file(run, wk, e, prev,
		      prev && !opt->force && prev->size == r->size &&
			      memcmp(prev->sha256, r->sha256, 32) == 0,
		      fd, &st, src, r);
out:
	if (fd >= 0)
		close(fd);
	free(src);
	free(path);
}

static void work(void *arg, unsigned worker)
{
	struct kiln_run *run = arg;
	struct worker *wk = &run->workers[worker];

	for (;;) {
		size_t i = atomic_fetch_add(&run->next, 1);
		if (i >= run->norder || atomic_load(&run->cancelled))
			return;
		size_t k = run->order[i];
		struct kiln_report *r = &run->reports[k];
		process_file(run, wk, &run->walk.v[k], r);
		kiln_run_report(run, r);
	}
}

struct order_key {
	uint64_t size;
	size_t index;
};

/* Largest first; walk order (already deterministic) between equals. */
static int by_size_desc(const void *a, const void *b)
{
	const struct order_key *x = a, *y = b;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

char *kiln_run_root(const char *root)
{
	char *r = strdup(root);
	size_t n;

	if (!r)
		return NULL;
	n = strlen(r);
	while (n > 1 && r[n - 1] == '/')
		r[--n] = '\0';
	return r;
}

/* Stat an artifact path that exists, so the walk can tell it is ours. */
static void note_own(const char *path, struct stat *own, size_t *n)
{
	if (path && stat(path, &own[*n]) == 0 && S_ISREG(own[*n].st_mode))
		(*n)++;
}

char *kiln_run_manifest_path(const struct kiln_run *run, const char *root)
{
	return run->opt.manifest_path ? strdup(run->opt.manifest_path)
				      : kiln_run_join(root, KILN_MANIFEST_NAME, "");
}

static void write_artifacts(struct kiln_run *run, const char *root)
{
	const struct kiln_options *opt = &run->opt;
	struct kiln_tempslot *slot = &run->workers[0].slot; /* the pool is done */
	struct kiln_error err = { 0 };
	bool have_br = false;
	char *path;

	for (size_t i = 0; i < run->walk.n; i++)
		have_br |= run->reports[i].coding[KILN_CODING_BR].outcome == KILN_CODING_KEPT;
	if (opt->write_manifest) {
		path = run->manifest_path;
		if (!path || kiln_manifest_write(path, opt, run->reports, run->walk.n, slot,
						 &err) != KILN_OK)
			run->artifact_failed = true;
		if (run->cb.on_artifact)
			run->cb.on_artifact(run->cb.user, "manifest",
					    path ? path : KILN_MANIFEST_NAME,
					    err.status == KILN_OK && path ? NULL : &err);
	}
	memset(&err, 0, sizeof(err));
	if (opt->write_nginx_conf) {
		path = opt->nginx_conf_path ? strdup(opt->nginx_conf_path)
					    : kiln_run_join(root, KILN_NGINX_CONF_NAME, "");
		if (!path || kiln_snippet_write(path, opt, have_br, slot, &err) != KILN_OK)
			run->artifact_failed = true;
		if (run->cb.on_artifact)
			run->cb.on_artifact(run->cb.user, "nginx snippet",
					    path ? path : KILN_NGINX_CONF_NAME,
					    err.status == KILN_OK && path ? NULL : &err);
		free(path);
	}
}

/* Siblings the previous manifest records for sources that are gone. */
static void remove_deleted(struct kiln_run *run, const char *root)
{
	for (size_t i = 0; i < run->state.n; i++) {
		const struct kiln_prev_entry *pe = &run->state.v[i];
		if (pe->seen)
			continue;
		for (int c = 0; c < KILN_NCODINGS; c++)
			if (pe->coding[c].kept)
				kiln_run_remove_recorded(run, root, pe->rel, (kiln_coding)c,
							 &pe->coding[c]);
	}
}

/* Temporary files left by a run that was killed: remove the stale ones. */
static void remove_dead_temps(struct kiln_run *run, const char *root)
{
	for (size_t i = 0; i < run->walk.n && !run->opt.dry_run; i++) {
		const struct kiln_entry *e = &run->walk.v[i];
		const char *base = strrchr(e->rel, '/');
		char *path;

		if (!kiln_is_temp_name(base ? base + 1 : e->rel) || !S_ISREG(e->st.st_mode))
			continue;
		path = kiln_run_join(root, e->rel, "");
		if (path && kiln_temp_is_stale(path) && unlink(path) == 0)
			kiln_run_event(run, KILN_EVENT_TEMP_REMOVED, path, -1, NULL);
		free(path);
	}
}

/* Load the previous manifest (unless there is none to read), and open the
 * cache.  Problems with either are events, never fatal. */
static void load_state(struct kiln_run *run, const char *root)
{
	struct kiln_error err = { 0 };

	kiln_state_free(&run->state);
	run->manifest_path = kiln_run_manifest_path(run, root);
	if (run->manifest_path && run->opt.write_manifest &&
	    kiln_state_load(run->manifest_path, &run->state, &err) != KILN_OK)
		kiln_run_event(run, KILN_EVENT_STATE_IGNORED, run->manifest_path, -1, &err);
	/* siblings written by runs that died before their manifest are kiln's too */
	if (run->opt.write_manifest)
		kiln_journal_merge(root, NULL, &run->state);
	run->journal.fd = -1;
	run->journal.path = NULL;
	if (run->opt.write_manifest && !run->opt.dry_run &&
	    kiln_journal_open(root, &run->journal, &err) != KILN_OK)
		kiln_run_event(run, KILN_EVENT_STATE_IGNORED, root, -1, &err);
	if (run->opt.cache_dir && !run->cache) {
		run->cache = kiln_cache_open(run->opt.cache_dir, run->opt.cache_max_size, &err);
		if (!run->cache) {
			kiln_run_event(run, KILN_EVENT_CACHE_FAILED, run->opt.cache_dir, -1, &err);
			run->cache_failed = true;
		}
	}
}

kiln_status kiln_run_tree(struct kiln_run *run, const char *root_arg)
{
	struct kiln_report r;
	struct kiln_error root_err = { 0 };
	struct order_key *keys = NULL;
	struct stat own[2];
	size_t nown = 0;
	uint64_t bytes = 0;
	char *root = kiln_run_root(root_arg);
	kiln_status ret;

	if (!root)
		return KILN_ERR_NOMEM;
	run->root = root;
	run->artifact_failed = run->remove_failed = run->cache_failed = false;
	run->hashing = run->opt.write_manifest && !run->opt.dry_run;
	memset(&run->walk, 0, sizeof(run->walk));
	if (run->opt.write_manifest)
		note_own(run->opt.manifest_path, own, &nown);
	if (run->opt.write_nginx_conf)
		note_own(run->opt.nginx_conf_path, own, &nown);
	ret = kiln_walk(root, &run->opt, own, nown, &run->walk, &root_err);
	if (ret == KILN_ERR_IO) {
		memset(&r, 0, sizeof(r));
		r.root = root;
		r.path = "";
		r.outcome = KILN_OUTCOME_ERROR;
		r.error = root_err;
		kiln_run_report(run, &r);
	}
	if (ret != KILN_OK)
		goto out;
	load_state(run, root);
	/* "X.gz" whose X is gone but which the manifest records as kiln's: an
	 * orphaned sibling (removed below, if still kiln's), never an asset */
	for (size_t i = 0; i < run->walk.n; i++) {
		struct kiln_entry *e = &run->walk.v[i];
		if ((e->outcome == KILN_OUTCOME_CANDIDATE || e->outcome == KILN_OUTCOME_EXCLUDED) &&
		    !kiln_state_find(&run->state, e->rel) &&
		    kiln_state_records_sibling(&run->state, e->rel))
			e->outcome = KILN_OUTCOME_SIBLING;
	}

	keys = malloc((run->walk.n ? run->walk.n : 1) * sizeof(*keys));
	run->order = malloc((run->walk.n ? run->walk.n : 1) * sizeof(*run->order));
	run->reports = calloc(run->walk.n ? run->walk.n : 1, sizeof(*run->reports));
	if (!keys || !run->order || !run->reports) {
		ret = KILN_ERR_NOMEM;
		goto out;
	}
	run->norder = 0;
	for (size_t i = 0; i < run->walk.n; i++) {
		const struct kiln_entry *e = &run->walk.v[i];
		struct kiln_report *rep = &run->reports[i];
		struct kiln_prev_entry *pe = kiln_state_find(&run->state, e->rel);
		bool regular = S_ISREG(e->st.st_mode);

		rep->root = root;
		rep->path = e->rel;
		rep->outcome = e->outcome;
		rep->size = regular ? (uint64_t)e->st.st_size : 0;
		rep->error = e->err;
		bytes += rep->size;
		/* still there (as an asset, or failing this time): not deleted */
		if (pe && e->outcome != KILN_OUTCOME_SIBLING)
			pe->seen = true;
		/* excluded files are opened only to be hashed for the manifest */
		if (e->outcome == KILN_OUTCOME_CANDIDATE ||
		    (e->outcome == KILN_OUTCOME_EXCLUDED && regular &&
		     (run->hashing || (pe && (pe->coding[0].kept || pe->coding[1].kept)))))
			keys[run->norder++] = (struct order_key){ rep->size, i };
	}
	qsort(keys, run->norder, sizeof(*keys), by_size_desc);
	for (size_t i = 0; i < run->norder; i++) {
		run->order[i] = keys[i].index;
		run->walk.v[keys[i].index].queued = true;
	}

	if (run->cb.on_plan)
		run->cb.on_plan(run->cb.user, root, run->walk.n, bytes);
	/* what the walk decided alone is reported before any work starts */
	for (size_t i = 0; i < run->walk.n; i++)
		if (!run->walk.v[i].queued)
			kiln_run_report(run, &run->reports[i]);
	atomic_store(&run->next, 0);
	kiln_pool_run(run->nworkers, work, run);
	if (atomic_load(&run->cancelled)) {
		ret = KILN_ERR_CANCELLED;
		goto out;
	}
	remove_deleted(run, root);
	remove_dead_temps(run, root);
	if (!run->opt.dry_run)
		write_artifacts(run, root);
	/* the manifest now records what the journals did: drop them, unless it
	 * could not be written (then they are all a later run will have) */
	if (!run->artifact_failed && run->opt.write_manifest && !run->opt.dry_run) {
		kiln_journal_close(&run->journal, true);
		kiln_journal_remove_stale(root, NULL);
	}
	if (run->cache && !run->opt.dry_run)
		kiln_cache_trim(run->cache);
	ret = run->artifact_failed || run->remove_failed || run->cache_failed ? KILN_ERR_IO : KILN_OK;
out:
	free(keys);
	free(run->order);
	run->order = NULL;
	free(run->reports);
	run->reports = NULL;
	kiln_walk_free(&run->walk);
	kiln_state_free(&run->state);
	kiln_journal_close(&run->journal, false);
	free(run->manifest_path);
	run->manifest_path = NULL;
	free(root);
	run->root = NULL;
	return ret;
}
