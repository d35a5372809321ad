/*
 * test_produce.c - a source's bytes through the encoders (produce.c), on a
 * scratch tree: held in memory, every coding's product decodes with its
 * own library to the source, is hashed as OpenSSL hashes it, is counted
 * once in progress, and goes into the cache, from which the next produce
 * takes it; a cache entry of other bytes is not trusted.  Streamed, each
 * product is a temporary file beside its sibling that decodes to the
 * source, the source is hashed on the way, a commit puts it in place with
 * its source's mode and mtime, a discard leaves nothing; a dry run makes
 * no file and the same sizes.  A commit refuses a read-only file kiln did
 * not write.  Once the run is cancelled nothing is encoded.
 */
#include "produce.h"

#include "cache.h"
#include "codec.h"

#include "check.h"
#include "decode.h"
#include "handmade.h"
#include "scratch.h"
#include "stage.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/kiln-produce-XXXXXX";
static char cache_dir[64];

#define MEM_LEN 30000
#define BIG_LEN 200000
#define STREAM_SIZE 65536

/* A source open for produce: in memory (its bytes read, hashed here) or
 * streamed. */
struct source {
	struct kiln_source src;
	struct stat st;
	uint8_t *buf;
	unsigned todo;
	char recipe[KILN_MAX_CODINGS][KILN_RECIPE_MAX];
	struct kiln_product prod[KILN_MAX_CODINGS];
	struct kiln_report r;
};

static void open_source(struct source *x, const struct stage *s, const char *rel, bool memory)
{
	size_t len;

	memset(x, 0, sizeof(*x));
	x->src.rel = rel;
	x->src.fd = open(hm_path(rel), O_RDONLY);
	CHECK(x->src.fd >= 0 && fstat(x->src.fd, &x->st) == 0);
	x->src.st = &x->st;
	x->src.planned = (uint64_t)x->st.st_size;
	if (memory) {
		x->buf = read_whole_file(hm_path(rel), &len);
		CHECK(x->buf && len == (size_t)x->st.st_size);
		x->src.buf = x->buf;
		hm_digest("sha256", x->buf, len, x->src.sha256);
		x->src.hashed = true;
	}
	x->todo = (1u << kiln_ncodecs) - 1;
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		kiln_codec_recipe(&s->opt, (kiln_coding)c, (uint64_t)x->st.st_size, x->recipe[c]);
}

static kiln_status produce(struct source *x, struct stage *s)
{
	return kiln_produce(&s->t, &s->run->workers[0], &x->src, x->todo,
			    (const char(*)[KILN_RECIPE_MAX])x->recipe, x->prod, &x->r);
}

static void close_source(struct source *x)
{
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		kiln_product_discard(&x->prod[c]);
		kiln_product_discard(&x->prod[c]); /* safe twice */
	}
	if (x->src.fd >= 0)
		close(x->src.fd);
	free(x->buf);
}

/* Product P of coding C: decodes to TEXT, and its digest is its bytes'. */
static void check_product(struct kiln_product *p, unsigned c, const uint8_t *text, size_t len)
{
	uint8_t *bytes = p->buf, sha[32];
	bool decodes;

	CHECK(p->made && p->len > 0);
	if (!p->made)
		return;
	if (!bytes && p->in_file) {
		bytes = malloc(p->len);
		CHECK(bytes && pread(p->tf.fd, bytes, p->len, 0) == (ssize_t)p->len);
	}
	decodes = bytes && decodes_to(kiln_codecs[c]->info.name, bytes, p->len, text, len);
	CHECK_MSG(decodes, "%s product does not decode", kiln_codecs[c]->info.name);
	CHECK(kiln_product_hash(p) == KILN_OK);
	if (bytes)
		hm_digest("sha256", bytes, p->len, sha);
	CHECK(bytes && memcmp(sha, p->sha256, 32) == 0);
	if (bytes != p->buf)
		free(bytes);
}

static void setup(struct stage *s, bool dry_run, bool cache)
{
	struct kiln_error err;

	stage_init(s);
	s->opt.codings = (1u << kiln_ncodecs) - 1;
	s->opt.stream_size = STREAM_SIZE;
	s->opt.dry_run = dry_run;
	CHECK(stage_load(s));
	if (cache)
		CHECK((s->t.cache = kiln_cache_open(cache_dir, (uint64_t)1 << 30, &err)) != NULL);
}

static void test_in_memory(const uint8_t *text)
{
	struct source a, b;
	struct stage s;
	char *cpath;
	struct kiln_error err;

	setup(&s, false, true);
	open_source(&a, &s, "mem.js", true);
	CHECK(produce(&a, &s) == KILN_OK);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		check_product(&a.prod[c], c, text, MEM_LEN);
		CHECK(a.prod[c].origin == KILN_ORIGIN_ENCODER && !a.prod[c].in_file);
		CHECK(kiln_product_verify(&a.prod[c], (kiln_coding)c, &a.src) == KILN_OK);
	}
	/* every byte counted once, over all the encodings */
	CHECK_MSG(a.src.credited == MEM_LEN, "credited %llu", (unsigned long long)a.src.credited);
	/* a damaged product does not verify */
	a.prod[0].buf[a.prod[0].len / 2] ^= 0x20;
	CHECK(kiln_product_verify(&a.prod[0], 0, &a.src) == KILN_ERR_VERIFY);
	a.prod[0].buf[a.prod[0].len / 2] ^= 0x20;
	CHECK(scratch_count(hm_root, ".kiln-*") == 0); /* nothing written in the tree */

	/* again: every coding from the cache, the same bytes */
	open_source(&b, &s, "mem.js", true);
	CHECK(produce(&b, &s) == KILN_OK);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		CHECK(b.prod[c].origin == KILN_ORIGIN_CACHE && b.prod[c].len == a.prod[c].len &&
		      memcmp(b.prod[c].buf, a.prod[c].buf, a.prod[c].len) == 0);
	close_source(&b);

	/* a cache entry that holds another source's encoding: encoded anew */
	cpath = kiln_cache_path(s.t.cache, a.src.sha256, kiln_codecs[0]->info.name, a.recipe[0]);
	CHECK(cpath && kiln_cache_put(s.t.cache, cpath, a.prod[1].buf, a.prod[1].len, false,
				       &s.run->temps, &err) == KILN_OK);
	free(cpath);
	open_source(&b, &s, "mem.js", true);
	b.todo = 1u;
	CHECK(produce(&b, &s) == KILN_OK);
	CHECK(b.prod[0].origin == KILN_ORIGIN_ENCODER);
	check_product(&b.prod[0], 0, text, MEM_LEN);
	close_source(&b);
	close_source(&a);
	stage_end(&s);
}

/* A commit: P in place as REL's sibling of coding C, with the source's
 * mode and mtime, decoding to TEXT. */
static void check_commit(struct stage *s, struct source *x, unsigned c, const uint8_t *text,
			 size_t len)
{
	struct kiln_error err;
	struct stat st;
	char path[600];

	snprintf(path, sizeof(path), "%s%s", hm_path(x->src.rel), kiln_codecs[c]->info.suffix);
	CHECK(kiln_product_commit(&s->t, &x->prod[c], path, &x->src, &err) == KILN_OK);
	CHECK(file_decodes_to(path, kiln_codecs[c]->info.name, text, len));
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == (x->st.st_mode & 07777) &&
	      st.st_mtim.tv_sec == x->st.st_mtim.tv_sec &&
	      st.st_mtim.tv_nsec == x->st.st_mtim.tv_nsec);
}

static void test_streamed(const uint8_t *big)
{
	uint64_t len[KILN_MAX_CODINGS];
	unsigned char sha[32], sha384[48];
	struct source x;
	struct stage s;
	unsigned br = (unsigned)kiln_coding_find("br");

	setup(&s, false, false);
	open_source(&x, &s, "big.js", false);
	CHECK(produce(&x, &s) == KILN_OK);
	/* a temporary file beside the sibling, per coding */
	CHECK(scratch_count(hm_root, ".kiln-*.tmp") == kiln_ncodecs);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		CHECK(x.prod[c].in_file && !x.prod[c].buf && x.prod[c].hashed);
		check_product(&x.prod[c], c, big, BIG_LEN);
		CHECK(kiln_product_verify(&x.prod[c], (kiln_coding)c, &x.src) == KILN_OK);
		len[c] = x.prod[c].len;
	}
	/* the source hashed on the way */
	hm_digest("sha256", big, BIG_LEN, sha);
	hm_digest("sha384", big, BIG_LEN, sha384);
	CHECK(x.src.hashed && memcmp(x.src.sha256, sha, 32) == 0 &&
	      memcmp(x.src.sha384, sha384, 48) == 0);
	CHECK(x.src.credited == BIG_LEN);
	check_commit(&s, &x, br, big, BIG_LEN);
	CHECK(scratch_count(hm_root, ".kiln-*.tmp") == kiln_ncodecs - 1);
	close_source(&x);
	CHECK(scratch_count(hm_root, ".kiln-*") == 0);
	CHECK(unlink(hm_path("big.js.br")) == 0);
	stage_end(&s);

	/* a dry run: no file, the same sizes (nothing kept to verify) */
	setup(&s, true, false);
	open_source(&x, &s, "big.js", false);
	CHECK(produce(&x, &s) == KILN_OK);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		CHECK(x.prod[c].made && !x.prod[c].in_file && x.prod[c].len == len[c]);
		CHECK(kiln_product_verify(&x.prod[c], (kiln_coding)c, &x.src) == KILN_OK);
	}
	CHECK(scratch_count(hm_root, ".kiln-*") == 0);
	close_source(&x);
	stage_end(&s);
}

/* A read-only file there that kiln did not write is refused; one it did
 * (own_there) is replaced. */
static void test_read_only(const uint8_t *text)
{
	struct kiln_error err;
	struct source x;
	struct stage s;
	char path[600];
	size_t n;
	uint8_t *was;

	setup(&s, false, false);
	open_source(&x, &s, "mem.js", true);
	x.todo = 1u;
	CHECK(produce(&x, &s) == KILN_OK);
	snprintf(path, sizeof(path), "%s%s", hm_path("mem.js"), kiln_codecs[0]->info.suffix);
	hm_put("mem.js.gz", "someone's own", 13);
	CHECK(chmod(path, 0444) == 0);
	CHECK(kiln_product_commit(&s.t, &x.prod[0], path, &x.src, &err) != KILN_OK);
	was = read_whole_file(path, &n);
	CHECK(was && n == 13 && memcmp(was, "someone's own", 13) == 0);
	free(was);
	x.prod[0].own_there = true;
	check_commit(&s, &x, 0, text, MEM_LEN);
	CHECK(unlink(path) == 0 && scratch_count(hm_root, ".kiln-*") == 0);
	close_source(&x);
	stage_end(&s);
}

static void test_cancelled(void)
{
	struct source x;
	struct stage s;

	for (int memory = 0; memory < 2; memory++) {
		setup(&s, false, false);
		kiln_run_cancel(s.run);
		open_source(&x, &s, memory ? "mem.js" : "big.js", memory);
		CHECK(produce(&x, &s) == KILN_ERR_CANCELLED);
		CHECK(x.r.outcome == KILN_OUTCOME_ERROR && x.r.error.status == KILN_ERR_CANCELLED);
		for (unsigned c = 0; c < kiln_ncodecs; c++)
			CHECK(!x.prod[c].made);
		close_source(&x);
		CHECK(scratch_count(hm_root, ".kiln-*") == 0);
		stage_end(&s);
	}
}

int main(void)
{
	uint8_t *text = make_text(MEM_LEN, 1), *big = make_text(BIG_LEN, 2);

	if (!hm_begin(dir))
		return 1;
	snprintf(cache_dir, sizeof(cache_dir), "%s/cache", dir);
	hm_put("mem.js", text, MEM_LEN);
	hm_put("big.js", big, BIG_LEN);
	CHECK(chmod(hm_path("big.js"), 0604) == 0);
	CHECK(utimensat(AT_FDCWD, hm_path("big.js"),
			(struct timespec[2]){ { 1500000000, 1 }, { 1500000000, 987654321 } }, 0) == 0);
	test_in_memory(text);
	test_streamed(big);
	test_read_only(text);
	test_cancelled();
	free(text);
	free(big);
	return scratch_end(dir, "test_produce");
}
