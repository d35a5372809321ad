/*
 * test_state_stream.c - the manifest read entry by entry, from memory
 * (kiln_state_parse) and from its file through a window of a few bytes
 * (kiln_state_load_window, the window refilled and moved inside every
 * token), gives what one jansson tree of the whole text gives
 * (kiln_state_parse_whole), on valid manifests and on every kind of broken
 * one: each seed of the manifest fuzzer's corpus and a hand-written
 * manifest with stale siblings, snippets, a tree and an encoded key, then
 * each of them with one byte deleted, one byte replaced by a JSON
 * structural character, a key repeated, and cut short, at every position.
 * The reference is jansson's reading of the whole text, not the code under
 * test; each state is compared field by field.
 */
#include "state.h"

#include "codec.h"

#include "check.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define H1 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define B16 "////////////////"
#define SRI "sha384-" B16 B16 B16 B16

static const char hand[] =
	"{\n  \"files\": {\n"
	"    \"a.js\": {\"size\": 300, \"sha256\": \"" H1 "\", \"integrity\": \"" SRI "\",\n"
	"      \"content_type\": \"text/javascript\", \"encodings\": {\"gzip\": {\"size\": 100,\n"
	"      \"sha256\": \"" H1 "\", \"encoder\": \"libdeflate-1.14-12\", \"path\": \"a.js.gz\"}},\n"
	"      \"no_gain\": {\"br\": {\"size\": 299, \"encoder\": \"brotli-1.0.9-11\"}},\n"
	"      \"immutable\": \"name\", \"fingerprint\": \"a\"},\n"
	"    \"b%25\\u00e9.css\": {\"size\": 10, \"sha256\": \"" H1 "\", \"integrity\": \"" SRI "\",\n"
	"      \"path_base64\": \"YiXDqS5jc3M=\", \"skipped\": \"small\"},\n"
	"    \"d/c.txt\": {\"size\": 10, \"sha256\": \"" H1 "\", \"integrity\": \"" SRI "\",\n"
	"      \"skipped\": \"no-gain\", \"x\": [1, 2.5e3, true, false, null, \"s\\\"]\"]}\n"
	"  },\n"
	"  \"generator\": {\"name\": \"kiln\"},\n"
	"  \"kiln_manifest\": 3,\n"
	"  \"settings\": {\"min_size\": 256},\n"
	"  \"snippets\": {\"kiln.nginx.http.conf\": {\"sha256\": \"" H1 "\"}},\n"
	"  \"stale_siblings\": {\"old.js.gz\": {\"coding\": \"gzip\", \"size\": 5, \"sha256\": \"" H1 "\"}},\n"
	"  \"tree\": \"dist\"\n}\n";

static bool same_coding(const struct kiln_coding_record *a, const struct kiln_coding_record *b)
{
	return a->outcome == b->outcome && a->size == b->size &&
	       memcmp(a->sha256, b->sha256, 32) == 0 &&
	       (a->outcome == KILN_CODING_OFF || strcmp(a->recipe, b->recipe) == 0);
}

static bool same_record(const struct kiln_record *a, const struct kiln_record *b)
{
	if (strcmp(a->rel, b->rel) != 0 || a->size != b->size || a->outcome != b->outcome ||
	    memcmp(a->sha256, b->sha256, 32) != 0 || memcmp(a->sha384, b->sha384, 48) != 0 ||
	    a->ndicts != b->ndicts || a->fp.why != b->fp.why || a->fp.start != b->fp.start ||
	    a->fp.len != b->fp.len)
		return false;
	for (size_t c = 0; c < KILN_NCODECS; c++)
		if (!same_coding(&a->coding[c], &b->coding[c]))
			return false;
	for (size_t i = 0; i < a->ndicts; i++) {
		const struct kiln_dict_record *x = &a->dicts[i], *y = &b->dicts[i];
		if (memcmp(x->dict_sha256, y->dict_sha256, 32) != 0 || x->size != y->size ||
		    memcmp(x->sha256, y->sha256, 32) != 0 || strcmp(x->recipe, y->recipe) != 0 ||
		    strcmp(x->dict_path, y->dict_path) != 0)
			return false;
	}
	return true;
}

static bool same_state(const struct kiln_state *a, const struct kiln_state *b)
{
	if (a->loaded != b->loaded || a->n != b->n || a->nstale != b->nstale ||
	    a->nsnippets != b->nsnippets || !a->tree != !b->tree ||
	    (a->tree && strcmp(a->tree, b->tree) != 0))
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].in_manifest != b->v[i].in_manifest || !same_record(&a->v[i].rec, &b->v[i].rec))
			return false;
	for (size_t i = 0; i < a->nstale; i++)
		if (strcmp(a->stale[i].rel, b->stale[i].rel) != 0 ||
		    a->stale[i].coding != b->stale[i].coding || a->stale[i].size != b->stale[i].size ||
		    memcmp(a->stale[i].sha256, b->stale[i].sha256, 32) != 0)
			return false;
	for (size_t i = 0; i < a->nsnippets; i++)
		if (strcmp(a->snippets[i].name, b->snippets[i].name) != 0 ||
		    memcmp(a->snippets[i].sha256, b->snippets[i].sha256, 32) != 0)
			return false;
	return true;
}

static int compared, loaded;

static char file[] = "/tmp/kiln-state-stream-XXXXXX";
static int file_fd = -1;

/* Every reader on TEXT[0..len): the same status and the same state. */
static void compare(const char *what, const char *text, size_t len)
{
	static const size_t windows[] = { 3, 61 };
	struct kiln_state a = { 0 }, b = { 0 };
	kiln_status sa = kiln_state_parse(text, len, &a);
	kiln_status sb = kiln_state_parse_whole(text, len, &b);

	CHECK_MSG(sa == sb && same_state(&a, &b), "%s: %d vs %d: %.*s", what, (int)sa, (int)sb,
		  (int)(len < 200 ? len : 200), text);
	/* (rewritten in place: a file truncated to nothing is flushed by
	 * some file systems before it is written again) */
	CHECK(pwrite(file_fd, text, len, 0) == (ssize_t)len && ftruncate(file_fd, (off_t)len) == 0);
	for (size_t i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
		struct kiln_state c = { 0 };
		struct kiln_error err;
		kiln_status sc = kiln_state_load_window(file, windows[i], &c, &err);
		CHECK_MSG(sc == sb && same_state(&c, &b), "%s, from a file (window %zu): %d vs %d: %.*s",
			  what, windows[i], (int)sc, (int)sb, (int)(len < 200 ? len : 200), text);
		kiln_state_free(&c);
	}
	compared++;
	loaded += sb == KILN_OK && b.n > 0;
	kiln_state_free(&a);
	kiln_state_free(&b);
}

static void mutations(const char *name, const char *doc, size_t len)
{
	static const char swaps[] = "{}[]\",: \\x0";
	char *m = malloc(len * 2 + 64);
	/* at most about 600 positions of each kind per document */
	size_t step = len / 600 + 1;

	compare(name, doc, len);
	for (size_t i = 0; m && i < len; i += step) {
		memcpy(m, doc, i); /* one byte deleted */
		memcpy(m + i, doc + i + 1, len - i - 1);
		compare("deleted", m, len - 1);
		compare("cut", doc, i); /* cut short */
		for (const char *c = swaps; *c; c++) {
			memcpy(m, doc, len);
			m[i] = *c;
			compare("replaced", m, len);
		}
		/* the text from I on twice: a member repeated, or junk after */
		if (len - i < len + 32) {
			memcpy(m, doc, len);
			memcpy(m + len, doc + i, len - i);
			compare("repeated", m, len + (len - i));
		}
	}
	free(m);
}

static void corpus(void)
{
	DIR *d = opendir(KILN_FUZZ_CORPUS);
	struct dirent *de;
	int seeds = 0;

	CHECK(d != NULL);
	while (d && (de = readdir(d))) {
		char path[4096], *buf;
		FILE *f;
		long n;
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", KILN_FUZZ_CORPUS, de->d_name);
		if (!(f = fopen(path, "rb")))
			continue;
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		rewind(f);
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			mutations(de->d_name, buf, (size_t)n);
			seeds++;
		}
		free(buf);
		fclose(f);
	}
	if (d)
		closedir(d);
	CHECK(seeds >= 3);
}

/* Texts the scan must hand to the whole reader, each with its answer. */
static void cases(void)
{
	static const char *const bad[] = {
		"{\"files\": {}, \"files\": {}, \"kiln_manifest\": 3}",
		"{\"files\": {}, \"kiln_manifest\": 3, \"kiln_manifest\": 3}",
		"{\"files\": {\"a\": {}, \"a\": {}}, \"kiln_manifest\": 3}",
		"{\"files\": {\"a\": {}, \"\\u0061\": {}}, \"kiln_manifest\": 3}",
		"{\"files\": {\"a\": {},}, \"kiln_manifest\": 3}",
		"{\"files\": {}, \"kiln_manifest\": 3} x",
		"{\"files\": {\"a\": {]}, \"kiln_manifest\": 3}",
		"{\"files\": [], \"kiln_manifest\": 3}",
		"{\"files\": {}, \"kiln_manifest\": 3x}",
		"{\"files\": {}, \"kiln_manifest\": 99}",
		"{\"files\": {}}",
		"[]",
		"",
	};
	struct kiln_state st = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		compare("case", bad[i], strlen(bad[i]));
		CHECK_MSG(kiln_state_parse(bad[i], strlen(bad[i]), &st) == KILN_ERR_INVALID, "%s", bad[i]);
		kiln_state_free(&st);
	}
	/* the hand-written manifest is read: 3 entries, its stale sibling, its
	 * snippet and its tree */
	CHECK(kiln_state_parse(hand, strlen(hand), &st) == KILN_OK && st.n == 3 && st.nstale == 1 &&
	      st.nsnippets == 1 && st.tree && strcmp(st.tree, "dist") == 0 &&
	      strcmp(st.v[1].rec.rel, "b%\xc3\xa9.css") == 0);
	kiln_state_free(&st);
}

int main(void)
{
	if ((file_fd = mkstemp(file)) < 0)
		return 1;
	cases();
	mutations("hand", hand, strlen(hand));
	corpus();
	/* the mutations left many documents readable, not only broken ones */
	CHECK(compared > 10000 && loaded > 1000);
	fprintf(stderr, "test_state_stream: %d texts compared, %d read with entries\n", compared,
		loaded);
	close(file_fd);
	unlink(file);
	return check_exit("test_state_stream");
}
