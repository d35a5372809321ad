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
#include "kiln.h"

#include "classify.h"
#include "codec.h"
#include "decide.h"
#include "hash.h"
#include "manifest.h"
#include "snippet.h"
#include "pool.h"
#include "sibling.h"
#include "source.h"
#include "walk.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct worker {
	void *codec_state[KILN_NCODINGS]; /* made on first use, reused */
	struct kiln_tempslot slot;
};

struct kiln_run {
	struct kiln_options opt;
	char **globs; /* owned copies of opt.include then opt.exclude */
	struct kiln_callbacks cb;
	pthread_mutex_t cb_lock;
	atomic_int cancelled;
	unsigned nworkers;
	struct worker *workers;

	/* the tree under way */
	const char *root;
	struct kiln_walk walk;
	size_t *order;     /* indexes of entries to open, largest first */
	struct kiln_report *reports; /* one per walk entry, for the manifest */
	bool hashing;      /* digests are needed (a manifest will be written) */
	bool artifact_failed;
	size_t norder;
	atomic_size_t next; /* next index into order */
};

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

	if (kiln_options_check(opt, NULL) != KILN_OK)
		return NULL;
	run = calloc(1, sizeof(*run));
	if (!run)
		return NULL;
	run->opt = *opt;
	if (cb)
		run->cb = *cb;
	pthread_mutex_init(&run->cb_lock, NULL);
	run->nworkers = opt->jobs ? opt->jobs : online_cpus();
	run->workers = calloc(run->nworkers, sizeof(*run->workers));
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
	return run;
fail:
	kiln_run_free(run);
	return NULL;
}

void kiln_run_free(struct kiln_run *run)
{
	if (!run)
		return;
	for (unsigned w = 0; run->workers && w < run->nworkers; w++)
		for (int c = 0; c < KILN_NCODINGS; c++)
			if (run->workers[w].codec_state[c])
				kiln_codecs[c]->state_free(run->workers[w].codec_state[c]);
	for (size_t i = 0; run->globs && run->globs[i]; i++)
		free(run->globs[i]);
	free(run->globs);
	free(run->workers);
	pthread_mutex_destroy(&run->cb_lock);
	free(run);
}

void kiln_run_cancel(struct kiln_run *run)
{
	atomic_store(&run->cancelled, 1);
}

void kiln_run_remove_temps(struct kiln_run *run)
{
	for (unsigned w = 0; w < run->nworkers; w++)
		kiln_tempslot_unlink(&run->workers[w].slot);
}

static void report(struct kiln_run *run, const struct kiln_report *r)
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

static char *join(const char *root, const char *rel, const char *suffix)
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

/* Encode, decide, verify and write the siblings of SRC[0..size). */
static void compress_file(struct kiln_run *run, struct worker *wk, const struct kiln_entry *e,
			  int fd, const struct stat *st, const uint8_t *src, struct kiln_report *r)
{
	const struct kiln_options *opt = &run->opt;
	size_t size = (size_t)st->st_size, enc_len[KILN_NCODINGS] = { 0 };
	uint8_t *enc[KILN_NCODINGS] = { 0 };
	bool keep[KILN_NCODINGS] = { 0 };

	for (int c = 0; c < KILN_NCODINGS; c++) {
		const struct kiln_codec *codec = kiln_codecs[c];
		size_t cap = codec->bound(size);
		kiln_status s;

		if (!(opt->codings & (1u << c)))
			continue;
		if (!wk->codec_state[c] && !(wk->codec_state[c] = codec->state_new(opt))) {
			report_error(r, KILN_ERR_NOMEM, ENOMEM, "cannot allocate encoder", "");
			goto out;
		}
		if (!(enc[c] = malloc(cap))) {
			report_error(r, KILN_ERR_NOMEM, ENOMEM, "out of memory", "");
			goto out;
		}
		s = codec->encode(wk->codec_state[c], src, size, enc[c], cap, &enc_len[c]);
		if (s != KILN_OK) {
			report_error(r, s, s == KILN_ERR_NOMEM ? ENOMEM : 0, "encoder failed",
				     codec->suffix);
			goto out;
		}
		r->coding[c].outcome = KILN_CODING_NO_GAIN;
		r->coding[c].size = enc_len[c];
	}
	kiln_decide(opt, r->size, enc_len, keep);

	for (int c = 0; c < KILN_NCODINGS; c++) {
		kiln_status s;
		if (!keep[c])
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

	r->outcome = KILN_OUTCOME_NO_GAIN;
	for (int c = 0; c < KILN_NCODINGS; c++) {
		const char *suffix = kiln_codecs[c]->suffix;
		kiln_status s;
		char *sib;
		if (!keep[c])
			continue;
		if (!opt->dry_run) {
			if (atomic_load(&run->cancelled)) {
				report_error(r, KILN_ERR_CANCELLED, 0, "cancelled", "");
				goto out;
			}
			if (!(sib = join(run->root, e->rel, suffix))) {
				report_error(r, KILN_ERR_NOMEM, ENOMEM, "out of memory", suffix);
				goto out;
			}
			s = kiln_sibling_write(&wk->slot, sib, enc[c], enc_len[c], st, &r->error);
			free(sib);
			if (s != KILN_OK) {
				r->outcome = KILN_OUTCOME_ERROR;
				r->error.suffix = suffix;
				goto out;
			}
		}
		r->coding[c].outcome = KILN_CODING_KEPT;
		r->outcome = KILN_OUTCOME_COMPRESSED;
	}
out:
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
	char *path = join(run->root, e->rel, "");
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
			if (kiln_source_hash(fd, &st, r->sha256, r->sha384, &r->error) != KILN_OK)
				r->outcome = KILN_OUTCOME_ERROR;
			else
				r->hashed = true;
		}
		goto out;
	}
	if (kiln_source_read(fd, &st, &src, &r->error) != KILN_OK) {
		r->outcome = KILN_OUTCOME_ERROR;
		goto out;
	}
	if (run->hashing) {
		struct kiln_hasher *h = kiln_hasher_new();
		if (h)
			kiln_hasher_update(h, src, (size_t)st.st_size);
		if (!h || kiln_hasher_final(h, r->sha256, r->sha384) != KILN_OK) {
			report_error(r, KILN_ERR_NOMEM, ENOMEM, "cannot hash", "");
			goto out;
		}
		r->hashed = true;
	}
	compress_file(run, wk, e, fd, &st, src, r);
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
		report(run, r);
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

static char *strip_slashes(const char *root)
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
		path = opt->manifest_path ? strdup(opt->manifest_path)
					  : join(root, KILN_MANIFEST_NAME, "");
		if (!path || kiln_manifest_write(path, opt, run->reports, run->walk.n, slot,
						 &err) != KILN_OK)
			run->artifact_failed = true;
		if (run->cb.on_artifact)
			run->cb.on_artifact(run->cb.user, "manifest",
					    path ? path : KILN_MANIFEST_NAME,
					    err.status == KILN_OK && path ? NULL : &err);
		free(path);
	}
	memset(&err, 0, sizeof(err));
	if (opt->write_nginx_conf) {
		path = opt->nginx_conf_path ? strdup(opt->nginx_conf_path)
					    : join(root, KILN_NGINX_CONF_NAME, "");
		if (!path || kiln_snippet_write(path, opt, have_br, slot, &err) != KILN_OK)
			run->artifact_failed = true;
		if (run->cb.on_artifact)
			run->cb.on_artifact(run->cb.user, "nginx snippet",
					    path ? path : KILN_NGINX_CONF_NAME,
					    err.status == KILN_OK && path ? NULL : &err);
		free(path);
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
	char *root = strip_slashes(root_arg);
	kiln_status ret;

	if (!root)
		return KILN_ERR_NOMEM;
	run->root = root;
	run->artifact_failed = false;
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
		report(run, &r);
	}
	if (ret != KILN_OK)
		goto out;

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
		bool regular = S_ISREG(e->st.st_mode);

		rep->root = root;
		rep->path = e->rel;
		rep->outcome = e->outcome;
		rep->size = regular ? (uint64_t)e->st.st_size : 0;
		rep->error = e->err;
		bytes += rep->size;
		/* excluded files are opened only to be hashed for the manifest */
		if (e->outcome == KILN_OUTCOME_CANDIDATE ||
		    (e->outcome == KILN_OUTCOME_EXCLUDED && regular && run->hashing))
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
			report(run, &run->reports[i]);
	atomic_store(&run->next, 0);
	kiln_pool_run(run->nworkers, work, run);
	if (atomic_load(&run->cancelled)) {
		ret = KILN_ERR_CANCELLED;
		goto out;
	}
	if (!run->opt.dry_run)
		write_artifacts(run, root);
	ret = run->artifact_failed ? KILN_ERR_IO : KILN_OK;
out:
	free(keys);
	free(run->order);
	run->order = NULL;
	free(run->reports);
	run->reports = NULL;
	kiln_walk_free(&run->walk);
	free(root);
	run->root = NULL;
	return ret;
}
