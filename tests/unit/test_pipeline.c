/*
 * test_pipeline.c - one file to its siblings (pipeline.c), each run a tree
 * run taken step by step (stage.h) with kiln_pipeline_file() doing the
 * work: every kept sibling decodes, with its coding's own library, to its
 * source and has its mode and mtime; which codings are kept follows the
 * rule of decide.c, applied here to sizes the codec rows give; a file no
 * coding shrinks gets none; an unchanged file keeps its siblings (same
 * inode), a changed one gets new ones, a coding turned off loses its
 * sibling, a name with no room for a suffix gets none of that coding.
 * Failures, made for real (a directory where a sibling goes, in memory and
 * streamed; a source gone; its directory replaced by a file): the report
 * names the file and the sibling, nothing is left half written, and a
 * source that is gone loses its record and siblings.
 */
#include "codec.h"

#include "check.h"
#include "decode.h"
#include "handmade.h"
#include "scratch.h"
#include "stage.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/kiln-pipeline-XXXXXX";

/* Text whose second half repeats its first from further back than
 * gzip's 32 KiB window reaches: br and zstd, whose windows reach it, make
 * siblings much smaller than gzip's. */
#define HALF_LEN 36000
#define TEXT_LEN (2 * HALF_LEN)
static const struct timespec mtime = { 1600000000, 123456789 };

/* A source REL of TEXT_LEN bytes of text (SEED), mode 0640, at MTIME. */
static uint8_t *put_text(const char *rel, unsigned seed)
{
	uint8_t *text = make_text(TEXT_LEN, seed);

	memcpy(text + HALF_LEN, text, HALF_LEN);

	hm_put(rel, text, TEXT_LEN);
	CHECK(chmod(hm_path(rel), 0640) == 0);
	CHECK(utimensat(AT_FDCWD, hm_path(rel), (struct timespec[2]){ mtime, mtime }, 0) == 0);
	return text;
}

/* Every coding on, no snippet; MAX_RATIO unless 0. */
static void options(struct stage *s, double max_ratio)
{
	stage_init(s);
	s->opt.codings = (1u << kiln_ncodecs) - 1;
	s->opt.servers = 0;
	if (max_ratio > 0)
		s->opt.max_ratio = max_ratio;
}

static char *sib(const char *rel, unsigned c)
{
	static char buf[4][600];
	static int i;
	char *p = buf[i++ % 4];

	snprintf(p, sizeof(buf[0]), "%s%s", hm_path(rel), kiln_codecs[c]->info.suffix);
	return p;
}

/* Coding C's encoding of TEXT by its codec row at OPT's level: its size. */
static size_t encoded_size(const struct kiln_options *opt, unsigned c, const uint8_t *text,
			   size_t len)
{
	static const atomic_int no = 0;
	struct kiln_encode_ctl ctl = { &no, NULL, NULL };
	const struct kiln_codec *codec = kiln_codecs[c];
	void *st = codec->state_new(opt->level[c], opt->extra[c]);
	size_t cap = codec->bound(len), n = 0;
	uint8_t *out = malloc(cap);

	CHECK(st && out && codec->encode(st, text, len, out, cap, &n, &ctl) == KILN_OK);
	free(out);
	codec->state_free(st);
	return n;
}

/* The keep rule as decide.c states it: each coding within max_ratio and
 * below the source; the first coding too, below the source, beside any
 * other kept; a later coding only below every kept earlier one. */
static void expected_keep(double ratio, size_t len, const size_t size[], bool keep[])
{
	bool other = false;

	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		keep[c] = size[c] < len && (double)size[c] <= ratio * (double)len;
		other |= c > 0 && keep[c];
	}
	keep[0] = keep[0] || (other && size[0] < len);
	for (unsigned c = 1; c < kiln_ncodecs; c++)
		for (unsigned d = 0; d < c; d++)
			keep[c] = keep[c] && !(keep[d] && size[d] <= size[c]);
}

/* REL (holding TEXT) after a run of S: each coding kept as the rule says,
 * its sibling decoding to TEXT with the source's mode and mtime, the report
 * and the record saying so; none where not kept.  Returns the kept set. */
static unsigned check_file(const struct stage *s, const char *rel, const uint8_t *text)
{
	const struct kiln_report *r = stage_report(s, rel);
	const struct kiln_record *rec = kiln_ledger_record(&s->t.ledger, stage_index(s, rel));
	size_t size[KILN_MAX_CODINGS];
	bool keep[KILN_MAX_CODINGS] = { false };
	unsigned kept = 0;

	CHECK(r && rec);
	if (!r || !rec)
		return 0;
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		size[c] = encoded_size(&s->opt, c, text, TEXT_LEN);
	expected_keep(s->opt.max_ratio, TEXT_LEN, size, keep);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const char *name = kiln_codecs[c]->info.name;
		unsigned char sha[32];
		struct stat st;
		size_t n;
		uint8_t *enc;
		CHECK_MSG(r->coding[c].size == size[c], "%s %s: reported %llu, encodes to %zu", rel,
			  name, (unsigned long long)r->coding[c].size, size[c]);
		CHECK_MSG(r->coding[c].outcome == (keep[c] ? KILN_CODING_KEPT : KILN_CODING_NO_GAIN),
			  "%s %s: outcome %d, the rule says %s", rel, name, r->coding[c].outcome,
			  keep[c] ? "kept" : "no gain");
		CHECK(rec->coding[c].outcome == r->coding[c].outcome);
		if (!keep[c]) {
			CHECK_MSG(lstat(sib(rel, c), &st) != 0, "%s: a sibling not kept", sib(rel, c));
			continue;
		}
		kept |= 1u << c;
		enc = read_whole_file(sib(rel, c), &n);
		CHECK_MSG(enc && decodes_to(name, enc, n, text, TEXT_LEN), "%s does not decode",
			  sib(rel, c));
		if (enc)
			hm_digest("sha256", enc, n, sha);
		CHECK(enc && n == size[c] && memcmp(sha, r->coding[c].sha256, 32) == 0 &&
		      memcmp(sha, rec->coding[c].sha256, 32) == 0);
		free(enc);
		CHECK(stat(sib(rel, c), &st) == 0 && (st.st_mode & 07777) == 0640 &&
		      st.st_mtim.tv_sec == mtime.tv_sec && st.st_mtim.tv_nsec == mtime.tv_nsec);
	}
	CHECK(r->outcome == (kept ? KILN_OUTCOME_COMPRESSED : KILN_OUTCOME_NO_GAIN));
	return kept;
}

static ino_t inode(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 ? st.st_ino : 0;
}

static void test_runs(void)
{
	uint8_t *app = put_text("app.js", 1), *noise = make_noise(8000, 2, "noise"), *again;
	size_t gz_size, br_size;
	ino_t ino[KILN_MAX_CODINGS];
	unsigned kept, br = (unsigned)kiln_coding_find("br");
	struct stage s;

	hm_put("noise.txt", noise, 8000);
	options(&s, 0);
	CHECK(stage_run(&s));
	kept = check_file(&s, "app.js", app);
	CHECK_MSG((kept & 1u) && (kept & (1u << br)), "gzip and br kept on text (kept %x)", kept);
	/* no coding shrinks noise: no sibling, none the source's size */
	CHECK(stage_report(&s, "noise.txt")->outcome == KILN_OUTCOME_NO_GAIN);
	CHECK(scratch_count(hm_root, "noise.txt?*") == 0);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		ino[c] = inode(sib("app.js", c));
	stage_end(&s);

	/* unchanged, same recipe: the very files, nothing written */
	options(&s, 0);
	CHECK(stage_run(&s));
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (kept & (1u << c)) {
			CHECK_MSG(inode(sib("app.js", c)) == ino[c], "%s written again", sib("app.js", c));
			CHECK(stage_report(&s, "app.js")->coding[c].origin == KILN_ORIGIN_PREVIOUS);
		}
	CHECK(s.ev.n == 0 && scratch_count(hm_root, ".kiln-*") == 0);
	stage_end(&s);

	/* another content of the same size: new siblings of it */
	again = put_text("app.js", 3);
	options(&s, 0);
	CHECK(stage_run(&s));
	kept = check_file(&s, "app.js", again);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (kept & (1u << c))
			CHECK(inode(sib("app.js", c)) != ino[c]);
	gz_size = stage_report(&s, "app.js")->coding[0].size;
	br_size = stage_report(&s, "app.js")->coding[br].size;
	stage_end(&s);

	/* a max_ratio gzip misses and br meets: gzip is kept all the same,
	 * beside br (the rule's second clause) */
	CHECK(br_size < gz_size);
	options(&s, ((double)gz_size + (double)br_size) / 2 / TEXT_LEN);
	CHECK(stage_run(&s));
	CHECK(check_file(&s, "app.js", again) & 1u);
	stage_end(&s);

	/* br turned off: its sibling goes, the gzip one stays as it was */
	ino[0] = inode(sib("app.js", 0));
	options(&s, 0);
	s.opt.codings = 1u;
	CHECK(stage_run(&s));
	CHECK(lstat(sib("app.js", br), &(struct stat){ 0 }) != 0);
	CHECK(hm_seen(&s.ev, KILN_EVENT_REMOVED, "app.js.br", NULL) == 1);
	CHECK(inode(sib("app.js", 0)) == ino[0]);
	CHECK(stage_report(&s, "app.js")->coding[br].outcome == KILN_CODING_OFF);
	stage_end(&s);
	free(app);
	free(noise);
	free(again);
	CHECK(unlink(hm_path("app.js")) == 0 && unlink(hm_path("noise.txt")) == 0);
}

/* A name with room for some suffixes only (NAME_MAX 255): the others get
 * no sibling, and say why. */
static void test_long_name(void)
{
	char rel[256];
	size_t len = 255 - 3; /* ".gz" and ".br" fit, ".zst" does not */
	uint8_t *text;
	struct stage s;

	memset(rel, 'n', len);
	memcpy(rel + len - 3, ".js", 4);
	text = put_text(rel, 4);
	options(&s, 0);
	CHECK(stage_run(&s));
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		bool fits = strlen(kiln_codecs[c]->info.suffix) <= 3;
		CHECK_MSG(fits == (stage_report(&s, rel)->coding[c].outcome != KILN_CODING_LONG_NAME),
			  "%s: outcome %d", kiln_codecs[c]->info.suffix,
			  stage_report(&s, rel)->coding[c].outcome);
		if (fits && stage_report(&s, rel)->coding[c].outcome == KILN_CODING_KEPT)
			CHECK(file_decodes_to(sib(rel, c), kiln_codecs[c]->info.name, text, TEXT_LEN));
	}
	stage_end(&s);
	/* clean up through kiln: the next tests start from an empty tree */
	CHECK(unlink(hm_path(rel)) == 0);
	options(&s, 0);
	CHECK(stage_run(&s) && scratch_count(hm_root, "n*") == 0);
	stage_end(&s);
	free(text);
}

/* A directory where REL's gzip sibling goes: refused before any sibling
 * is written (STREAM: the file is streamed, its temporary files exist
 * already when the refusal comes). */
static void test_blocked(bool stream)
{
	const char *rel = stream ? "big.js" : "blocked.js";
	uint8_t *text = put_text(rel, 5);
	const struct kiln_report *r;
	struct stage s;
	char gz[300];

	snprintf(gz, sizeof(gz), "%s.gz", rel);
	CHECK(mkdir(hm_path(gz), 0755) == 0);
	options(&s, 0);
	if (stream)
		s.opt.stream_size = 16384;
	CHECK(stage_run(&s));
	r = stage_report(&s, rel);
	CHECK(r && r->outcome == KILN_OUTCOME_ERROR && r->error.status == KILN_ERR_UNSAFE &&
	      strcmp(r->path, rel) == 0 && strcmp(r->error.suffix, ".gz") == 0);
	CHECK_MSG(scratch_count(hm_root, stream ? "big.js?*" : "blocked.js?*") == 1,
		  "%s: a sibling written beside the refused one", rel);
	CHECK(scratch_count(hm_root, ".kiln-*") == 0);
	CHECK(kiln_ledger_record(&s.t.ledger, stage_index(&s, rel)) == NULL);
	stage_end(&s);
	CHECK(rmdir(hm_path(gz)) == 0 && unlink(hm_path(rel)) == 0);
	free(text);
}

/* A source gone between the walk and its turn: its siblings go with it.
 * Its directory replaced by a file: the path leads nowhere in the tree, so
 * it is gone too, and nothing is written through or beside the file, nor
 * in the directory moved away. */
static void test_gone(void)
{
	uint8_t *a = put_text("gone.js", 6), *b;
	const struct kiln_report *r;
	struct stage s;
	unsigned had = 0;
	char *before;

	CHECK(mkdir(hm_path("sub"), 0755) == 0);
	b = put_text("sub/lib.js", 7);
	options(&s, 0);
	CHECK(stage_run(&s) && hm_exists("gone.js.gz") && hm_exists("sub/lib.js.gz"));
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		had |= (unsigned)hm_exists(sib("gone.js", c) + strlen(hm_root) + 1) << c;
	stage_end(&s);

	options(&s, 0);
	CHECK(stage_load(&s) && stage_plan(&s));
	CHECK(unlink(hm_path("gone.js")) == 0);
	CHECK(rename(hm_path("sub"), hm_path("sub.old")) == 0);
	hm_put("sub", "a file now", 10);
	before = scratch_snapshot(hm_path("sub.old"), true);
	stage_pool(&s);
	r = stage_report(&s, "gone.js");
	CHECK(r && r->outcome == KILN_OUTCOME_ERROR && r->error.errnum == ENOENT &&
	      strcmp(r->path, "gone.js") == 0);
	CHECK(scratch_count(hm_root, "gone.js*") == 0);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "gone.js%s", kiln_codecs[c]->info.suffix);
		CHECK(hm_seen(&s.ev, KILN_EVENT_REMOVED, rel, NULL) == ((had >> c) & 1u));
	}
	CHECK(kiln_ledger_record(&s.t.ledger, stage_index(&s, "gone.js")) == NULL);
	r = stage_report(&s, "sub/lib.js");
	/* (a path through a file is no path of the tree: gone, as above) */
	CHECK(r && r->outcome == KILN_OUTCOME_ERROR && r->error.errnum == ENOENT &&
	      strcmp(r->path, "sub/lib.js") == 0 && *r->error.suffix == '\0');
	CHECK(kiln_ledger_record(&s.t.ledger, stage_index(&s, "sub/lib.js")) == NULL);
	CHECK(hm_seen(&s.ev, KILN_EVENT_REMOVED, "sub/lib.js.gz", NULL) == 0);
	CHECK(!kiln_ledger_had_remove_failed(&s.t.ledger) && !kiln_ledger_is_lost(&s.t.ledger));
	{
		char *after = scratch_snapshot(hm_path("sub.old"), true);
		CHECK(before && after && strcmp(before, after) == 0);
		free(after);
	}
	CHECK(scratch_count(hm_root, "sub*") == 2); /* the file "sub" and "sub.old" */
	{
		size_t n;
		uint8_t *was = read_whole_file(hm_path("sub"), &n);
		CHECK(was && n == 10 && memcmp(was, "a file now", 10) == 0);
		free(was);
	}
	stage_finish(&s);
	stage_end(&s);
	free(before);
	free(a);
	free(b);
}

int main(void)
{
	if (!hm_begin(dir))
		return 1;
	CHECK(kiln_coding_find("gzip") == 0 && kiln_coding_find("br") > 0);
	test_runs();
	test_long_name();
	test_blocked(false);
	test_blocked(true);
	test_gone();
	return scratch_end(dir, "test_pipeline");
}
