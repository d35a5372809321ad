/* produce.c - see produce.h. */
#include "produce.h"

#include "cache.h"
#include "hash.h"
#include "sibling.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- in memory ---- */

/* Progress of one of SHARES encodings of a source held in memory: each
 * byte an encoder consumes counts 1/SHARES. */
struct share {
	struct kiln_tree *t;
	struct kiln_source *src;
	uint64_t shares, rest;
};

static void credit_share(void *arg, size_t n)
{
	struct share *sh = arg;
	uint64_t total = sh->rest + n;

	sh->rest = total % sh->shares;
	kiln_tree_progress(sh->t, &sh->src->credited, sh->src->planned, 0, total / sh->shares);
}

/* Coding C of the buffered SRC into *p: from the cache, else by encoding
 * (and then into the cache); one of SHARES encodings for progress. */
static kiln_status produce_one(struct kiln_tree *t, struct worker *w, struct kiln_source *src,
			       kiln_coding c, const char *recipe, struct kiln_product *p,
			       struct kiln_report *r, unsigned shares)
{
	struct share sh = { t, src, shares, 0 };
	struct kiln_encode_ctl ctl = { &t->run->cancelled, credit_share, &sh };
	const struct kiln_codec *codec = kiln_codecs[c];
	size_t size = (size_t)src->st->st_size, cap, len = 0;
	char *cpath = NULL;
	kiln_status s;

	if (t->cache && src->hashed) {
		cpath = kiln_cache_path(t->cache, src->sha256, codec->info.name, recipe);
		/* a hit is decoded against the source before it is trusted */
		if (cpath && kiln_cache_get(t->cache, cpath, &p->buf, &len)) {
			if (codec->verify(p->buf, len, src->buf, size) == KILN_OK) {
				p->made = true;
				p->len = len;
				p->origin = KILN_ORIGIN_CACHE;
				credit_share(&sh, size);
				free(cpath);
				return KILN_OK;
			}
			/* a good entry that decodes to other bytes: the put
			 * below replaces it */
			free(p->buf);
			p->buf = NULL;
		}
	}
	p->origin = KILN_ORIGIN_ENCODER;
	if (!w->codec_state[c] &&
	    !(w->codec_state[c] = codec->state_new(t->opt->level[c], t->opt->extra[c]))) {
		kiln_report_fail(r, KILN_ERR_NOMEM, ENOMEM, "cannot allocate encoder", codec->info.suffix);
		goto fail;
	}
	cap = codec->bound(size);
	if (!cap || !(p->buf = malloc(cap))) {
		kiln_report_fail(r, KILN_ERR_NOMEM, ENOMEM, "out of memory", codec->info.suffix);
		goto fail;
	}
	s = codec->encode(w->codec_state[c], src->buf, size, p->buf, cap, &len, &ctl);
	if (s != KILN_OK || len == 0) {
		kiln_report_fail(r, s ? s : KILN_ERR_ENCODER, s == KILN_ERR_NOMEM ? ENOMEM : 0,
				 s == KILN_ERR_CANCELLED ? "cancelled" : "encoder failed",
				 codec->info.suffix);
		goto fail;
	}
	p->made = true;
	p->len = len;
	if (cpath && !t->opt->dry_run) {
		struct kiln_error err = { 0 };
		if (kiln_cache_put(t->cache, cpath, p->buf, len, t->opt->fsync, &t->run->temps,
				   &err) != KILN_OK) {
			kiln_tree_event(t, KILN_EVENT_CACHE_FAILED, cpath, (int)c, &err);
			kiln_ledger_cache_failed(&t->ledger);
		}
	}
	free(cpath);
	return KILN_OK;
fail:
	free(p->buf);
	p->buf = NULL;
	free(cpath);
	return r->error.status;
}

/* ---- streamed ---- */

/* Where one coding's streamed output goes. */
struct stream_out {
	struct kiln_product *p;
	struct kiln_hasher *h;
	int errnum; /* why writing failed */
};

static kiln_status to_temp(void *arg, const uint8_t *buf, size_t n)
{
	struct stream_out *o = arg;

	kiln_hasher_update(o->h, buf, n);
	o->p->len += n;
	if (o->p->in_file && kiln_write_all(o->p->tf.fd, buf, n) != 0) {
		o->errnum = errno;
		return KILN_ERR_IO;
	}
	return KILN_OK;
}

/* Set up coding C's output: a temporary file beside its sibling (none in
 * a dry run) and a hasher. */
static kiln_status open_out(struct kiln_tree *t, const struct kiln_source *src, kiln_coding c,
			    struct stream_out *o, struct kiln_report *r)
{
	const char *suffix = kiln_codecs[c]->info.suffix;
	struct timespec times[2];
	struct kiln_file_meta meta = kiln_sibling_meta(src->st, false, times);
	char *sib;
	kiln_status s;

	/* whether a read-only file there may be replaced (is it kiln's?) is
	 * decided once the sibling is made (pipeline.c, check_new()) */
	meta.refuse_read_only = false;

	if (!(o->h = kiln_hasher_new())) {
		kiln_report_fail(r, KILN_ERR_NOMEM, ENOMEM, "cannot hash", suffix);
		return KILN_ERR_NOMEM;
	}
	if (!(sib = kiln_path_join(t->root, src->rel, suffix))) {
		kiln_report_fail(r, KILN_ERR_NOMEM, ENOMEM, "out of memory", suffix);
		return KILN_ERR_NOMEM;
	}
	if (t->opt->dry_run) /* a dry run still finds what would stop the real one */
		s = kiln_final_check(sib, &meta, &r->error);
	else
		s = kiln_tempfile_create(&t->run->temps, &o->p->tf, sib, &meta, &r->error);
	free(sib);
	if (s != KILN_OK) {
		r->outcome = KILN_OUTCOME_ERROR;
		r->error.suffix = suffix;
		return s;
	}
	o->p->in_file = !t->opt->dry_run;
	return KILN_OK;
}

/* Read SRC once, in chunks, into the streaming encoders of TODO. */
static kiln_status produce_stream(struct kiln_tree *t, struct kiln_source *src, unsigned todo,
				  struct kiln_product prod[], struct kiln_report *r)
{
	uint64_t size = (uint64_t)src->st->st_size, off = 0;
	struct stream_out out[KILN_MAX_CODINGS] = { 0 };
	void *enc[KILN_MAX_CODINGS] = { 0 };
	struct kiln_hasher *src_h = NULL;
	uint8_t *buf = malloc(KILN_CODEC_PIECE);
	kiln_status s = KILN_OK;

	if (!buf || (!src->hashed && !(src_h = kiln_hasher_new()))) {
		kiln_report_fail(r, KILN_ERR_NOMEM, ENOMEM, "out of memory", "");
		goto out;
	}
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		if (!(todo & (1u << c)))
			continue;
		out[c].p = &prod[c];
		prod[c].origin = KILN_ORIGIN_ENCODER;
		if (open_out(t, src, (kiln_coding)c, &out[c], r) != KILN_OK)
			goto out;
		if (!(enc[c] = kiln_codecs[c]->stream_new(t->opt->level[c], t->opt->extra[c], size))) {
			kiln_report_fail(r, KILN_ERR_NOMEM, ENOMEM, "cannot allocate encoder",
					 kiln_codecs[c]->info.suffix);
			goto out;
		}
	}
	for (bool last = false; !last;) {
		size_t want = size - off < KILN_CODEC_PIECE ? (size_t)(size - off) : KILN_CODEC_PIECE;
		ssize_t n;

		if (atomic_load(&t->run->cancelled)) {
			kiln_report_fail(r, KILN_ERR_CANCELLED, 0, "cancelled", "");
			goto out;
		}
		n = kiln_pread_full(src->fd, buf, want, off);
		if (n < 0 || (size_t)n != want) {
			kiln_report_fail(r, n < 0 ? KILN_ERR_IO : KILN_ERR_CHANGED, n < 0 ? errno : 0,
					 n < 0 ? "cannot read" : "file changed while being compressed",
					 "");
			goto out;
		}
		off += want;
		last = off == size;
		if (src_h)
			kiln_hasher_update(src_h, buf, want);
		kiln_tree_progress(t, &src->credited, src->planned, 0, want);
		for (unsigned c = 0; c < kiln_ncodecs; c++) {
			if (!enc[c])
				continue;
			s = kiln_codecs[c]->stream_write(enc[c], buf, want, last, to_temp, &out[c]);
			if (s != KILN_OK) {
				kiln_report_fail(r, s, s == KILN_ERR_IO ? out[c].errnum
						 : s == KILN_ERR_NOMEM ? ENOMEM : 0,
						 s == KILN_ERR_IO ? "cannot write" : "encoder failed",
						 kiln_codecs[c]->info.suffix);
				goto out;
			}
		}
	}
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		if (!out[c].p)
			continue;
		prod[c].made = kiln_hasher_final(out[c].h, prod[c].sha256, NULL) == KILN_OK;
		prod[c].hashed = prod[c].made;
		out[c].h = NULL;
		if (!prod[c].made) {
			kiln_report_fail(r, KILN_ERR_NOMEM, ENOMEM, "cannot hash",
					 kiln_codecs[c]->info.suffix);
			goto out;
		}
	}
	if (src_h) {
		s = kiln_hasher_final(src_h, src->sha256, src->sha384);
		src_h = NULL;
		if (s != KILN_OK) {
			kiln_report_fail(r, KILN_ERR_NOMEM, ENOMEM, "cannot hash", "");
			goto out;
		}
		src->hashed = true;
	}
out:
	if (src_h)
		kiln_hasher_final(src_h, NULL, NULL);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		if (enc[c])
			kiln_codecs[c]->stream_free(enc[c]);
		if (out[c].h)
			kiln_hasher_final(out[c].h, NULL, NULL);
	}
	free(buf);
	return r->outcome == KILN_OUTCOME_ERROR ? r->error.status : KILN_OK;
}

kiln_status kiln_produce(struct kiln_tree *t, struct worker *w, struct kiln_source *src,
			 unsigned todo, const char recipe[][KILN_RECIPE_MAX],
			 struct kiln_product prod[], struct kiln_report *r)
{
	if (!todo)
		return KILN_OK;
	unsigned shares = 0;

	if (!src->buf)
		return produce_stream(t, src, todo, prod, r);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		shares += (todo >> c) & 1u;
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		if (!(todo & (1u << c)))
			continue;
		if (atomic_load(&t->run->cancelled)) {
			kiln_report_fail(r, KILN_ERR_CANCELLED, 0, "cancelled", "");
			return KILN_ERR_CANCELLED;
		}
		if (produce_one(t, w, src, (kiln_coding)c, recipe[c], &prod[c], r, shares) !=
		    KILN_OK)
			return r->error.status;
	}
	return KILN_OK;
}

kiln_status kiln_product_verify(const struct kiln_product *p, kiln_coding c,
				const struct kiln_source *src)
{
	const struct kiln_codec *codec = kiln_codecs[c];
	uint64_t size = (uint64_t)src->st->st_size;

	if (p->buf)
		return codec->verify(p->buf, (size_t)p->len, src->buf, (size_t)size);
	if (p->in_file)
		return codec->verify_fd(p->tf.fd, p->len, src->fd, size);
	return KILN_OK; /* a streamed dry run keeps no bytes to decode */
}

kiln_status kiln_product_hash(struct kiln_product *p)
{
	if (p->hashed)
		return KILN_OK;
	if (kiln_sha256(p->buf, (size_t)p->len, p->sha256) != KILN_OK)
		return KILN_ERR_NOMEM;
	p->hashed = true;
	return KILN_OK;
}

kiln_status kiln_product_commit(struct kiln_tree *t, struct kiln_product *p, const char *path,
				const struct kiln_source *src, struct kiln_error *err)
{
	struct timespec times[2];
	struct kiln_file_meta meta = kiln_sibling_meta(src->st, t->opt->fsync, times);
	kiln_status s;

	meta.refuse_read_only = !p->own_there;
	if (p->in_file) {
		p->in_file = false;
		return kiln_tempfile_commit(&p->tf, path, &meta, err);
	}
	s = kiln_write_atomic(&t->run->temps, path, p->buf, (size_t)p->len, &meta, err);
	return s;
}

void kiln_product_discard(struct kiln_product *p)
{
	free(p->buf);
	p->buf = NULL;
	if (p->in_file)
		kiln_tempfile_discard(&p->tf);
	p->in_file = false;
}
