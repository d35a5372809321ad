/*
 * test_journal.c - the run journal (journal.c): created only by the first
 * line, one line per sibling in the documented format, merged into a state
 * once its writer is gone (and not while it lives: a lock held by this
 * process or by another counts as live), torn and malformed lines ignored,
 * kiln_journal_any(), and the removal of dead journals except the run's own.
 * Expected lines are written out by hand; base64 of paths was computed
 * outside the test.
 */
#include "journal.h"

#include "codec.h"

#include "check.h"
#include "scratch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char root[64];

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Names in ROOT that start with ".kiln-journal-" and have 6 more bytes. */
static int count_journals(void)
{
	DIR *d = opendir(root);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		if (strncmp(e->d_name, ".kiln-journal-", 14) == 0 && strlen(e->d_name) == 20)
			n++;
	if (d)
		closedir(d);
	return n;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);
	size_t n = 0;

	if (f && buf)
		n = fread(buf, 1, 65535, f);
	if (f)
		fclose(f);
	if (buf)
		buf[n] = '\0';
	return buf;
}

static void put_file(const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	f = fopen(path, "w");
	CHECK(f && fputs(text, f) >= 0);
	if (f)
		fclose(f);
}

/* Lowercase hex of 32 bytes, written here rather than by kiln_hex(). */
static void hex32(const uint8_t b[32], char out[65])
{
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void test_lines(void)
{
	kiln_coding gz = kiln_coding_find("gzip"), br = kiln_coding_find("br");
	uint8_t sha[32], src[32], sha2[32], src2[32];
	char hs[65], hsrc[65], hs2[65], hsrc2[65], want[1024], *text, *path;
	struct kiln_journal j;
	struct kiln_state st = { 0 };
	struct kiln_prev_entry *pe;

	for (int i = 0; i < 32; i++) {
		sha[i] = (uint8_t)i;
		src[i] = (uint8_t)(0xff - i);
		sha2[i] = (uint8_t)(0x80 | i);
		src2[i] = (uint8_t)(i * 7);
	}
	hex32(sha, hs);
	hex32(src, hsrc);
	hex32(sha2, hs2);
	hex32(src2, hsrc2);

	kiln_journal_init(&j, root, false);
	CHECK(count_journals() == 0 && j.fd < 0 && j.path == NULL);
	kiln_journal_close(&j, false);
	CHECK(count_journals() == 0); /* nothing written: nothing created */

	kiln_journal_add(&j, "assets/app.js", gz, "libdeflate-1.19-l12", 123, sha, 4567, src);
	CHECK(!j.failed && j.fd >= 0 && j.path != NULL);
	CHECK(count_journals() == 1);
	CHECK(j.path && strncmp(j.path, root, strlen(root)) == 0 && j.path[strlen(root)] == '/' &&
	      strncmp(j.path + strlen(root) + 1, ".kiln-journal-", 14) == 0 &&
	      strlen(j.path + strlen(root) + 1) == 20);
	kiln_journal_add(&j, "a b/\xff.js", br, "", 9, sha2, 10, src2);
	CHECK(count_journals() == 1 && !j.failed);
	snprintf(want, sizeof(want),
		 "gzip libdeflate-1.19-l12 123 %s 4567 %s YXNzZXRzL2FwcC5qcw==\n"
		 "br - 9 %s 10 %s YSBiL/8uanM=\n", hs, hsrc, hs2, hsrc2);
	text = j.path ? slurp(j.path) : NULL;
	CHECK_MSG(text && strcmp(text, want) == 0, "journal holds:\n%s\nwant:\n%s", text, want);
	free(text);

	/* its writer lives (this process holds the lock): not merged, kept */
	CHECK(!kiln_journal_any(root));
	CHECK(kiln_journal_merge(root, &st) == KILN_OK && st.n == 0 && !st.loaded);
	kiln_journal_remove_stale(root, NULL);
	CHECK(count_journals() == 1);

	path = j.path ? strdup(j.path) : NULL;
	kiln_journal_close(&j, false);
	CHECK(j.fd < 0 && j.path == NULL);
	CHECK(path && exists(path));
	CHECK(kiln_journal_any(root));
	CHECK(kiln_journal_merge(root, &st) == KILN_OK && st.loaded && st.n == 2);
	pe = kiln_state_find(&st, "assets/app.js");
	CHECK(pe && !pe->in_manifest && pe->njv == 1);
	CHECK(pe && pe->jv[0].coding == gz && pe->jv[0].size == 123 &&
	      memcmp(pe->jv[0].sha256, sha, 32) == 0 && pe->jv[0].src_known &&
	      pe->jv[0].src_size == 4567 && memcmp(pe->jv[0].src_sha256, src, 32) == 0 &&
	      strcmp(pe->jv[0].recipe, "libdeflate-1.19-l12") == 0);
	pe = kiln_state_find(&st, "a b/\xff.js");
	CHECK(pe && pe->njv == 1 && pe->jv[0].coding == br && pe->jv[0].size == 9 &&
	      memcmp(pe->jv[0].sha256, sha2, 32) == 0 && pe->jv[0].src_known &&
	      pe->jv[0].src_size == 10 && memcmp(pe->jv[0].src_sha256, src2, 32) == 0 &&
	      pe->jv[0].recipe[0] == '\0');
	CHECK(kiln_state_records_sibling(&st, "a b/\xff.js.br"));
	kiln_state_free(&st);

	kiln_journal_remove_stale(root, NULL);
	CHECK(path && !exists(path) && count_journals() == 0);
	CHECK(!kiln_journal_any(root));
	free(path);

	/* close(remove), then used again: a new journal, removed in its turn */
	kiln_journal_add(&j, "x.js", gz, "r", 1, sha, 2, src);
	CHECK(count_journals() == 1);
	kiln_journal_close(&j, true);
	CHECK(count_journals() == 0);
	kiln_journal_add(&j, "x.js", gz, "r", 1, sha, 2, src);
	CHECK(count_journals() == 1 && !j.failed);
	kiln_journal_close(&j, true);
	CHECK(count_journals() == 0);
	pthread_mutex_destroy(&j.lock);
}

static void test_disabled_and_failed(void)
{
	uint8_t sha[32] = { 0 };
	struct kiln_journal j;
	char missing[128];

	kiln_journal_init(&j, root, true);
	kiln_journal_add(&j, "a.js", 0, "r", 1, sha, 2, sha);
	CHECK(count_journals() == 0 && j.fd < 0 && !j.failed);
	kiln_journal_close(&j, true);
	pthread_mutex_destroy(&j.lock);

	snprintf(missing, sizeof(missing), "%s/no-such-dir", root);
	kiln_journal_init(&j, missing, false);
	kiln_journal_add(&j, "a.js", 0, "r", 1, sha, 2, sha);
	CHECK(j.failed && j.fd < 0);
	kiln_journal_close(&j, true);
	pthread_mutex_destroy(&j.lock);
	CHECK(!kiln_journal_any(missing));
}

#define Z64 "0000000000000000000000000000000000000000000000000000000000000000"
#define Z63 "000000000000000000000000000000000000000000000000000000000000000"
#define F64 "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"

/* A journal written by hand: good lines, old-format lines, and lines that
 * must be ignored, ending in a torn line that would parse if complete. */
static void test_hand_written(void)
{
	static const char text[] =
		"gzip r1 10 " Z64 " 100 " F64 " aGFuZC5qcw==\n"
		"gzip 50 " F64 " b2xkLmpz\n"                      /* kiln 0.1 */
		"br r2 20 " F64 " 100 " F64 " aGFuZC5qcw==\n"
		"lzma r 1 " Z64 " 1 " Z64 " eC5qcw==\n"            /* unknown coding */
		"brotli r 1 " Z64 " 1 " Z64 " eC5qcw==\n"          /* a word, not the token */
		"gzip r -1 " Z64 " 1 " Z64 " eC5qcw==\n"
		"gzip r +1 " Z64 " 1 " Z64 " eC5qcw==\n"
		"gzip r 1a " Z64 " 1 " Z64 " eC5qcw==\n"
		"gzip r 1 " Z64 " 18446744073709551616 " Z64 " eC5qcw==\n"
		"gzip r 1 0" Z64 " 1 " Z64 " eC5qcw==\n"            /* 65 hex digits */
		"gzip r 1 g" Z63 " 1 " Z64 " eC5qcw==\n"          /* not hex */
		"gzip r 1 " Z64 " 1 " Z64 " Li4veC5qcw==\n"        /* "../x.js" */
		"gzip r 1 " Z64 " 1 " Z64 " YQBiLmpz\n"            /* "a\0b.js" */
		"gzip r 1 " Z64 " 1 " Z64 " !!!!\n"
		"gzip r 1 " Z64 " 1 " Z64 "\n"                     /* 6 fields */
		"gzip r 1 " Z64 " 1 " Z64 " eC5qcw== extra\n"      /* 8 fields */
		"gzip 1 " Z64 "\n"
		"gzip 1 " Z64 " eC5qcw== eC5qcw==\n"                /* 5 fields */
		"gzip 1 " Z64 " 1 " Z64 " eC5qcw==\n"              /* old format, 6 fields */
		"\n"
		"gzip 0123456789012345678901234567890123456789012345678901234567890123 1 " Z64
		" 1 " Z64 " eC5qcw==\n"                            /* recipe too long */
		"gzip r 7 " Z64 " 7 " Z64 " eC5q";                 /* torn: "x.j" */
	kiln_coding gz = kiln_coding_find("gzip"), br = kiln_coding_find("br");
	uint8_t zero[32] = { 0 }, ff[32];
	struct kiln_state st = { 0 };
	struct kiln_prev_entry *pe;
	char small_doc[512];

	memset(ff, 0xff, sizeof(ff));
	put_file(".kiln-journal-hand01", text);
	put_file(".kiln-journal-abc", "gzip r 1 " Z64 " 1 " Z64 " eC5qcw==\n"); /* not a journal name */
	CHECK(kiln_journal_any(root));

	/* merged into a state that has a manifest entry for hand.js */
	snprintf(small_doc, sizeof(small_doc),
		 "{\"kiln_manifest\": 2, \"files\": {\"hand.js\": {\"size\": 100, \"sha256\": \"" F64
		 "\", \"integrity\": \"sha384-%s\", \"skipped\": \"small\"}}}",
		 "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
	CHECK(kiln_state_parse(small_doc, strlen(small_doc), &st) == KILN_OK && st.n == 1);
	CHECK(kiln_journal_merge(root, &st) == KILN_OK);
	CHECK_MSG(st.n == 2, "%zu entries", st.n);
	pe = kiln_state_find(&st, "hand.js");
	CHECK(pe && pe->in_manifest && pe->njv == 2);
	CHECK(pe && pe->njv == 2 && pe->jv[0].coding == gz && pe->jv[0].size == 10 &&
	      memcmp(pe->jv[0].sha256, zero, 32) == 0 && pe->jv[0].src_size == 100 &&
	      memcmp(pe->jv[0].src_sha256, ff, 32) == 0 && strcmp(pe->jv[0].recipe, "r1") == 0);
	CHECK(pe && pe->njv == 2 && pe->jv[1].coding == br && pe->jv[1].size == 20 &&
	      strcmp(pe->jv[1].recipe, "r2") == 0);
	pe = kiln_state_find(&st, "old.js");
	CHECK(pe && !pe->in_manifest && pe->njv == 1 && pe->jv[0].coding == gz &&
	      pe->jv[0].size == 50 && memcmp(pe->jv[0].sha256, ff, 32) == 0 &&
	      !pe->jv[0].src_known && pe->jv[0].recipe[0] == '\0');
	CHECK(kiln_state_find(&st, "x.js") == NULL);
	CHECK(kiln_state_find(&st, "x.j") == NULL);
	kiln_state_free(&st);

	kiln_journal_remove_stale(root, NULL);
	CHECK(count_journals() == 0);
	{
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/.kiln-journal-abc", root);
		CHECK(exists(p)); /* not kiln's: left alone */
		unlink(p);
	}
}

/* Liveness is the lock, whoever holds it: a child that keeps its journal
 * open keeps it live; once it exits (without closing) the journal is dead. */
static void test_other_process(void)
{
	int up[2], down[2], status;
	uint8_t sha[32];
	struct kiln_state st = { 0 };
	char c = 0;
	pid_t pid;

	memset(sha, 0x42, sizeof(sha));
	CHECK(pipe(up) == 0 && pipe(down) == 0);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		struct kiln_journal j;
		kiln_journal_init(&j, root, false);
		kiln_journal_add(&j, "child.js", kiln_coding_find("gzip"), "r", 5, sha, 6, sha);
		if (write(up[1], j.failed ? "f" : "k", 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(2);
		_exit(0); /* dies without closing: the journal stays behind */
	}
	CHECK(pid > 0);
	CHECK(read(up[0], &c, 1) == 1 && c == 'k');
	CHECK(count_journals() == 1);
	CHECK(!kiln_journal_any(root));
	CHECK(kiln_journal_merge(root, &st) == KILN_OK && st.n == 0);
	kiln_journal_remove_stale(root, NULL);
	CHECK(count_journals() == 1);
	CHECK(write(down[1], "x", 1) == 1);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(kiln_journal_any(root));
	CHECK(kiln_journal_merge(root, &st) == KILN_OK && st.n == 1);
	CHECK(st.n == 1 && strcmp(st.v[0].rec.rel, "child.js") == 0 && st.v[0].njv == 1 &&
	      st.v[0].jv[0].size == 5 && st.v[0].jv[0].src_size == 6 &&
	      memcmp(st.v[0].jv[0].sha256, sha, 32) == 0);
	kiln_state_free(&st);
	kiln_journal_remove_stale(root, NULL);
	CHECK(count_journals() == 0);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}

static void test_remove_own(void)
{
	uint8_t sha[32] = { 1 };
	struct kiln_journal a, b, live;
	char *pa, *pb;

	kiln_journal_init(&a, root, false);
	kiln_journal_init(&b, root, false);
	kiln_journal_init(&live, root, false);
	kiln_journal_add(&a, "a.js", 0, "r", 1, sha, 1, sha);
	kiln_journal_add(&b, "b.js", 0, "r", 1, sha, 1, sha);
	kiln_journal_add(&live, "c.js", 0, "r", 1, sha, 1, sha);
	pa = a.path ? strdup(a.path) : NULL;
	pb = b.path ? strdup(b.path) : NULL;
	CHECK(pa && pb && strcmp(pa, pb) != 0 && count_journals() == 3);
	kiln_journal_close(&a, false);
	kiln_journal_close(&b, false);
	kiln_journal_remove_stale(root, pa);
	CHECK(pa && exists(pa));       /* OWN is kept */
	CHECK(pb && !exists(pb));      /* the other dead one is gone */
	CHECK(live.path && exists(live.path)); /* a live one is never removed */
	kiln_journal_remove_stale(root, NULL);
	CHECK(pa && !exists(pa) && count_journals() == 1);
	kiln_journal_close(&live, true);
	CHECK(count_journals() == 0);
	pthread_mutex_destroy(&a.lock);
	pthread_mutex_destroy(&b.lock);
	pthread_mutex_destroy(&live.lock);
	free(pa);
	free(pb);
}

#define NTHREADS 4
#define NLINES 100

struct writer {
	struct kiln_journal *j;
	int id;
};

static void *write_lines(void *arg)
{
	struct writer *w = arg;
	uint8_t sha[32];
	char rel[160];

	for (int i = 0; i < NLINES; i++) {
		memset(sha, w->id * NLINES + i, sizeof(sha));
		snprintf(rel, sizeof(rel), "t%d/%03d-%s.js", w->id, i,
			 "a-long-name-so-that-lines-are-not-tiny-xxxxxxxxxxxxxxxxxxxxxxxx");
		kiln_journal_add(w->j, rel, (kiln_coding)(i % 2), "recipe", (uint64_t)(w->id * NLINES + i),
				 sha, 7, sha);
	}
	return NULL;
}

/* Concurrent writers: every line whole, none lost. */
static void test_threads(void)
{
	struct kiln_journal j;
	struct writer w[NTHREADS];
	pthread_t t[NTHREADS];
	struct kiln_state st = { 0 };
	size_t good = 0;

	kiln_journal_init(&j, root, false);
	for (int i = 0; i < NTHREADS; i++) {
		w[i].j = &j;
		w[i].id = i;
		CHECK(pthread_create(&t[i], NULL, write_lines, &w[i]) == 0);
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	CHECK(!j.failed && count_journals() == 1);
	kiln_journal_close(&j, false);
	CHECK(kiln_journal_merge(root, &st) == KILN_OK);
	CHECK_MSG(st.n == NTHREADS * NLINES, "%zu entries", st.n);
	for (size_t i = 0; i < st.n; i++) {
		int id, k;
		if (sscanf(st.v[i].rec.rel, "t%d/%03d-", &id, &k) == 2 && st.v[i].njv == 1 &&
		    st.v[i].jv[0].size == (uint64_t)(id * NLINES + k) &&
		    st.v[i].jv[0].coding == k % 2 &&
		    st.v[i].jv[0].sha256[31] == (uint8_t)(id * NLINES + k))
			good++;
	}
	CHECK(good == NTHREADS * NLINES);
	kiln_state_free(&st);
	kiln_journal_remove_stale(root, NULL);
	CHECK(count_journals() == 0);
	pthread_mutex_destroy(&j.lock);
}

int main(void)
{
	strcpy(root, "/tmp/kiln-test-journal-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	test_lines();
	test_disabled_and_failed();
	test_hand_written();
	test_other_process();
	test_remove_own();
	test_threads();
	if (check_failures == 0)
		scratch_remove(root);
	else
		fprintf(stderr, "test_journal: files left in %s\n", root);
	return check_exit("test_journal");
}
