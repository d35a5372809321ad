/*
 * stream.c - a source at least kiln_options.stream_size bytes long.
 *
 * Holding such a file and its encodings in memory would make peak memory
 * grow with the largest file.  Instead the file is read in 1 MiB chunks,
 * each chunk goes to every coding's streaming encoder (codec.h), and each
 * encoder's output goes straight into that sibling's temporary file, hashed
 * on the way.  Only once every encoder has finished are the sizes known:
 * the keep rules (decide.c) then pick the temporary files that are
 * verified (decoded and compared with the source, read again in chunks) and
 * renamed into place; the others are removed.  Memory is one chunk plus the
 * encoders' own state, whatever the size of the file.
 *
 * The rules are run.c's: the same reuse of the previous run's siblings, the
 * same decisions, the same atomic writer and the same clean-up on failure.
 * What differs is stated in kiln.h (stream_size): zlib instead of libdeflate
 * for gzip, no cache, no verification in a dry run.
 */
#include "stream.h"

#include "codec.h"
#include "decide.h"
#include "hash.h"
#include "source.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CHUNK = 1 << 20 };

/* One coding's output: where it goes, how long it is, its digest. */
struct stream_out {
	int fd;                 /* the sibling's temporary file; -1 in a dry run */
	uint64_t len;
	struct kiln_hasher *h;  /* of the encoded bytes, when hashing */
	int errnum;             /* why writing failed */
};

static kiln_status to_temp(void *arg, const uint8_t *p, size_t n)
{
	struct stream_out *o = arg;

	if (o->h)
		kiln_hasher_update(o->h, p, n);
	o->len += n;
	if (o->fd >= 0 && kiln_write_all(o->fd, p, n) != 0) {
		o->errnum = errno;
		return KILN_ERR_IO;
	}
	return KILN_OK;
}

static void fail(struct kiln_report *r, kiln_status st, int errnum, const char *what,
		 const char *suffix)
{
	r->outcome = KILN_OUTCOME_ERROR;
	r->error.status = st;
	r->error.errnum = errnum;
	r->error.what = what;
	r->error.suffix = suffix;
}

/*
 * Read the source once and feed every coding in TODO; hash the source too if
 * it is not hashed yet and the manifest needs it.  Returns false with *r
 * filled on failure.
 */
static bool encode_all(struct kiln_run *run, int fd, const struct stat *st,
		       const bool todo[KILN_NCODINGS], struct stream_out out[KILN_NCODINGS],
		       struct kiln_report *r)
{
	uint64_t size = (uint64_t)st->st_size, off = 0;
	void *enc[KILN_NCODINGS] = { 0 };
	struct kiln_hasher *src_h = NULL;
	uint8_t *buf = malloc(CHUNK);
	bool ok = false;

	if (!buf) {
		fail(r, KILN_ERR_NOMEM, ENOMEM, "out of memory", "");
		goto out;
	}
	if (run->hashing && !r->hashed && !(src_h = kiln_hasher_new())) {
		fail(r, KILN_ERR_NOMEM, ENOMEM, "cannot hash", "");
		goto out;
	}
	for (int c = 0; c < KILN_NCODINGS; c++) {
		if (!todo[c])
			continue;
		if (!(enc[c] = kiln_codecs[c]->stream_new(&run->opt, size)) ||
		    (run->hashing && !(out[c].h = kiln_hasher_new()))) {
			fail(r, KILN_ERR_NOMEM, ENOMEM, "cannot allocate encoder", kiln_codecs[c]->suffix);
			goto out;
		}
	}
	for (;;) {
		size_t want = size - off < CHUNK ? (size_t)(size - off) : CHUNK;
		ssize_t n;
		bool last;

		if (atomic_load(&run->cancelled)) {
			fail(r, KILN_ERR_CANCELLED, 0, "cancelled", "");
			goto out;
		}
		n = kiln_pread_full(fd, buf, want, off);
		if (n < 0) {
			fail(r, KILN_ERR_IO, errno, "cannot read", "");
			goto out;
		}
		if ((size_t)n != want) {
			fail(r, KILN_ERR_CHANGED, 0, "file changed while being compressed", "");
			goto out;
		}
		off += want;
		last = off == size;
		if (src_h)
			kiln_hasher_update(src_h, buf, want);
		for (int c = 0; c < KILN_NCODINGS; c++) {
			kiln_status s;
			if (!enc[c])
				continue;
			s = kiln_codecs[c]->stream_write(enc[c], buf, want, last, to_temp, &out[c]);
			if (s != KILN_OK) {
				fail(r, s, s == KILN_ERR_IO ? out[c].errnum : s == KILN_ERR_NOMEM ? ENOMEM : 0,
				     s == KILN_ERR_IO ? "cannot write" : "encoder failed",
				     kiln_codecs[c]->suffix);
				goto out;
			}
		}
		if (last)
			break;
	}
	if (src_h) {
		kiln_status s = kiln_hasher_final(src_h, r->sha256, r->sha384);
		src_h = NULL;
		if (s != KILN_OK) {
			fail(r, KILN_ERR_NOMEM, ENOMEM, "cannot hash", "");
			goto out;
		}
		r->hashed = true;
	}
	ok = true;
out:
	if (src_h)
		kiln_hasher_final(src_h, NULL, NULL);
	for (int c = 0; c < KILN_NCODINGS; c++)
		if (enc[c])
			kiln_codecs[c]->stream_free(enc[c]);
	free(buf);
	return ok;
}

/* One attempt; USE_TRIED lets a coding the previous run tried and dropped
 * count by its recorded size without encoding it.  Returns false, having
 * written nothing, if that guess would be wrong now (the rules keep it):
 * then the caller tries again without it. */
static bool stream_once(struct kiln_run *run, struct kiln_tempslot *slot,
			const struct kiln_entry *e, const struct kiln_prev_entry *prev, int fd,
			const struct stat *st, struct kiln_report *r, bool use_tried)
{
	bool done = true;
	const struct kiln_options *opt = &run->opt;
	struct stream_out out[KILN_NCODINGS];
	size_t enc_len[KILN_NCODINGS] = { 0 };
	bool keep[KILN_NCODINGS] = { 0 }, have_prev[KILN_NCODINGS] = { 0 };
	bool todo[KILN_NCODINGS] = { 0 }, reuse = false, any = false;
	bool written[KILN_NCODINGS] = { 0 };
	struct timespec times[2];
	struct kiln_file_meta meta = kiln_sibling_meta(st, opt->fsync, times);
	char *sib[KILN_NCODINGS] = { 0 };

	for (int c = 0; c < KILN_NCODINGS; c++)
		out[c] = (struct stream_out){ .fd = -1 };

	/* the same content as last time: its siblings may still be good */
	if (prev && !opt->force && prev->size == r->size) {
		if (kiln_source_hash(fd, st, r->sha256, r->sha384, &r->error) != KILN_OK) {
			r->outcome = KILN_OUTCOME_ERROR;
			goto out;
		}
		r->hashed = true;
		reuse = memcmp(prev->sha256, r->sha256, 32) == 0;
	}
	for (int c = 0; c < KILN_NCODINGS; c++) {
		const struct kiln_prev_coding *pc = reuse ? &prev->coding[c] : NULL;
		if (!(opt->codings & (1u << c)))
			continue;
		/* kept before and still good; or tried and dropped before, when
		 * its recorded size is all the rules need */
		if (pc && kiln_state_coding_reusable(&run->state, opt, (kiln_coding)c) &&
		    (pc->kept ? kiln_run_previous_ok(run, e, pc, (kiln_coding)c, st, NULL, fd)
			      : pc->tried && use_tried)) {
			have_prev[c] = true;
			enc_len[c] = (size_t)pc->size;
			continue;
		}
		todo[c] = any = true;
		if (!(sib[c] = kiln_run_join(run->root, e->rel, kiln_codecs[c]->suffix))) {
			fail(r, KILN_ERR_NOMEM, ENOMEM, "out of memory", kiln_codecs[c]->suffix);
			goto out;
		}
		if (opt->dry_run) {
			/* a dry run still finds what would stop the real one */
			if (kiln_sibling_check(sib[c], st, &r->error) != KILN_OK) {
				r->outcome = KILN_OUTCOME_ERROR;
				r->error.suffix = kiln_codecs[c]->suffix;
				goto out;
			}
			continue;
		}
		out[c].fd = kiln_temp_create(slot, (unsigned)c, sib[c], &meta, &r->error);
		if (out[c].fd < 0) {
			r->outcome = KILN_OUTCOME_ERROR;
			r->error.suffix = kiln_codecs[c]->suffix;
			goto out;
		}
	}
	if (any && !encode_all(run, fd, st, todo, out, r))
		goto out;
	for (int c = 0; c < KILN_NCODINGS; c++)
		if (todo[c])
			enc_len[c] = (size_t)out[c].len;

	kiln_decide(opt, r->size, enc_len, keep);
	for (int c = 0; c < KILN_NCODINGS; c++)
		if (keep[c] && have_prev[c] && !prev->coding[c].kept) {
			done = false; /* kept now, but its bytes were never made */
			goto out;
		}
	for (int c = 0; c < KILN_NCODINGS; c++) {
		if (!(opt->codings & (1u << c)))
			continue;
		r->coding[c].outcome = KILN_CODING_NO_GAIN;
		r->coding[c].size = enc_len[c];
		if (out[c].h) {
			kiln_status s = kiln_hasher_final(out[c].h, r->coding[c].sha256, NULL);
			out[c].h = NULL;
			if (s != KILN_OK) {
				fail(r, KILN_ERR_NOMEM, ENOMEM, "cannot hash", kiln_codecs[c]->suffix);
				goto out;
			}
		}
		if (keep[c] && todo[c] && opt->verify && out[c].fd >= 0) {
			kiln_status s = kiln_codecs[c]->verify_fd(out[c].fd, out[c].len, fd, r->size);
			if (s != KILN_OK) {
				fail(r, s, s == KILN_ERR_NOMEM ? ENOMEM : 0,
				     s == KILN_ERR_VERIFY ? "sibling does not decode to its source"
							  : "cannot verify sibling",
				     kiln_codecs[c]->suffix);
				goto out;
			}
		}
	}
	if (!kiln_source_unchanged(fd, st)) {
		fail(r, KILN_ERR_CHANGED, 0, "file changed while being compressed", "");
		goto out;
	}

	r->outcome = KILN_OUTCOME_NO_GAIN;
	for (int c = 0; c < KILN_NCODINGS; c++) {
		if (!(opt->codings & (1u << c)))
			continue;
		if (!keep[c]) {
			if (out[c].fd >= 0)
				kiln_temp_discard(slot, (unsigned)c, out[c].fd);
			out[c].fd = -1;
			kiln_run_no_sibling(run, prev, e->rel, (kiln_coding)c);
			continue;
		}
		if (have_prev[c]) {
			r->coding[c].origin = KILN_ORIGIN_PREVIOUS;
			memcpy(r->coding[c].sha256, prev->coding[c].sha256, 32);
		} else if (out[c].fd >= 0) {
			kiln_status s = kiln_temp_commit(slot, (unsigned)c, out[c].fd, sib[c], &meta,
							 &r->error);
			out[c].fd = -1;
			if (s != KILN_OK) {
				r->outcome = KILN_OUTCOME_ERROR;
				r->error.suffix = kiln_codecs[c]->suffix;
				goto out;
			}
			r->coding[c].origin = KILN_ORIGIN_ENCODER;
			written[c] = true;
			kiln_journal_add(&run->journal, e->rel, (kiln_coding)c, out[c].len,
					 r->coding[c].sha256);
		} else {
			r->coding[c].origin = KILN_ORIGIN_ENCODER; /* a dry run */
		}
		r->coding[c].outcome = KILN_CODING_KEPT;
		r->outcome = KILN_OUTCOME_COMPRESSED;
	}
out:
	for (int c = 0; c < KILN_NCODINGS; c++) {
		if (out[c].fd >= 0)
			kiln_temp_discard(slot, (unsigned)c, out[c].fd);
		if (out[c].h)
			kiln_hasher_final(out[c].h, NULL, NULL);
		free(sib[c]);
	}
	if (!done)
		return false;
	kiln_run_undo_written(run, e->rel, written, r);
	kiln_run_drop_outdated(run, prev, reuse, e->rel, r);
	return true;
}

void kiln_stream_file(struct kiln_run *run, struct kiln_tempslot *slot,
		      const struct kiln_entry *e, const struct kiln_prev_entry *prev, int fd,
		      const struct stat *st, struct kiln_report *r)
{
	struct kiln_report start = *r;

	if (!stream_once(run, slot, e, prev, fd, st, r, true)) {
		*r = start;
		stream_once(run, slot, e, prev, fd, st, r, false);
	}
}
