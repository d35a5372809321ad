/*
 * test_check.c - `kiln check` (check.c) on a hand-made tree and manifest
 * (handmade.h): a tree that matches its manifest has no problem; then each
 * kind of problem, made by hand, is found once, where it is, and nothing
 * else is: an asset changed or not recorded, a recorded sibling missing,
 * stale (it decodes to other bytes) or with other metadata, a record whose
 * asset is gone and its orphaned sibling, a sibling no record holds (stale
 * when it does not decode), a stale sibling on record still there, an
 * interrupted run's temporary file; no manifest; another tree's manifest;
 * and, while another kiln holds the tree's lock, no problem but "in
 * progress".  check writes nothing: the tree is the same after.
 */
#include "kiln.h"

#include "handmade.h"

#include "check.h"
#include "scratch.h"

#include <sys/file.h>
#include <sys/wait.h>

static char dir[] = "/tmp/kiln-check-XXXXXX";

static const char ok_js[] = "var ok = 'a source whose sibling is exactly what kiln wrote';\n";
static const char changed_js[] = "var changed = 'what the manifest recorded';\n";
static const char new_js[] = "var added = 'a source added since the manifest';\n";
static const char miss_js[] = "var missing = 'its sibling was deleted';\n";
static const char stale_js[] = "var stale = 'the source as it is now';\n";
static const char stale_old[] = "var stale = 'the source as it was';\n";
static const char meta_js[] = "var meta = 'its sibling was chmod-ed';\n";
static const char gone_js[] = "var gone = 'deleted with its sibling left';\n";
static const char unrec_js[] = "var unrec = 'a sibling nobody recorded';\n";
static const char unrec2_js[] = "var unrec2 = 'a sibling nobody recorded, of other bytes';\n";

struct outcome {
	kiln_status status;
	uint64_t problems;
	struct hm_events ev;
};

static struct outcome check(const char *manifest)
{
	struct outcome o;
	struct kiln_options opt;
	struct kiln_callbacks cb = { 0 };
	struct kiln_run *run;

	memset(&o, 0, sizeof(o));
	o.status = KILN_ERR_NOMEM;
	kiln_options_init(&opt);
	opt.jobs = 1;
	opt.manifest_path = manifest;
	cb.on_event = hm_on_event;
	cb.user = &o.ev;
	if ((run = kiln_run_new(&opt, &cb))) {
		o.status = kiln_check_tree(run, hm_root, &o.problems);
		kiln_run_free(run);
	}
	return o;
}

/* Put source REL holding TEXT with the gzip sibling of SIB_TEXT (NULL: no
 * sibling) at the source's mtime; its manifest entry, recording the
 * sibling put (RECORD_SIB) or none. */
static char *asset(const char *rel, const char *text, const char *sib_text, bool record_sib)
{
	unsigned char gz[1024];
	size_t n = 0;
	char sib[300];

	hm_put(rel, text, strlen(text));
	if (sib_text) {
		n = hm_gzip(sib_text, strlen(sib_text), gz, sizeof(gz));
		CHECK(n > 0);
		snprintf(sib, sizeof(sib), "%s.gz", rel);
		hm_put(sib, gz, n);
		CHECK(hm_same_times(sib, rel) == 0);
	}
	return hm_entry(rel, text, record_sib ? gz : NULL, n, "");
}

static void test_clean_tree(void)
{
	struct outcome o;
	char *files;

	files = hm_join(2, (char *[]){ asset("ok.js", ok_js, ok_js, true),
				       asset("plain.js", new_js, NULL, false) });
	hm_manifest(KILN_MANIFEST_NAME, files, "", "");
	free(files);
	o = check(NULL);
	CHECK_MSG(o.status == KILN_OK && o.problems == 0 && o.ev.n == 0,
		  "status %d, %llu problems, first '%s' %d '%s'", o.status,
		  (unsigned long long)o.problems, o.ev.n ? o.ev.path[0] : "", o.ev.n ? (int)o.ev.ev[0] : -1,
		  o.ev.n ? o.ev.what[0] : "");
	CHECK(unlink(hm_path("plain.js")) == 0);
}

static void test_every_problem(void)
{
	unsigned char gz[1024];
	size_t n;
	struct stat before, after;
	struct outcome o;
	char *files, *stale;

	files = hm_join(8, (char *[]){
		asset("ok.js", ok_js, ok_js, true),
		hm_entry("changed.js", changed_js, NULL, 0, ""),
		asset("miss.js", miss_js, miss_js, true),
		asset("stale.js", stale_old, stale_old, true),
		asset("meta.js", meta_js, meta_js, true),
		asset("gone.js", gone_js, gone_js, true),
		asset("unrec.js", unrec_js, NULL, false),
		asset("unrec2.js", unrec2_js, NULL, false) });
	stale = hm_join(1, (char *[]){ hm_stale("left.css.gz", "gzip", "left", 4) });
	hm_manifest(KILN_MANIFEST_NAME, files, stale, "");
	free(files);
	free(stale);
	/* now the damage, one of each */
	hm_put("changed.js", "var changed = 'edited since';\n", 30);
	hm_put("new.js", new_js, strlen(new_js));
	CHECK(unlink(hm_path("miss.js.gz")) == 0);
	hm_put("stale.js", stale_js, strlen(stale_js)); /* its sibling decodes to the old one */
	CHECK(hm_same_times("stale.js.gz", "stale.js") == 0);
	CHECK(chmod(hm_path("meta.js.gz"), 0600) == 0);
	CHECK(unlink(hm_path("gone.js")) == 0);
	n = hm_gzip(unrec_js, strlen(unrec_js), gz, sizeof(gz));
	hm_put("unrec.js.gz", gz, n);
	n = hm_gzip(ok_js, strlen(ok_js), gz, sizeof(gz));
	hm_put("unrec2.js.gz", gz, n);
	hm_put("left.css.gz", "left", 4);
	hm_put(".kiln-abcdef.tmp", "half", 4);
	CHECK(stat(hm_path("ok.js.gz"), &before) == 0);

	o = check(NULL);
	CHECK(o.status == KILN_OK);
	CHECK(hm_seen(&o.ev, KILN_EVENT_OUT_OF_DATE, "changed.js", "changed since the manifest") == 1);
	CHECK(hm_seen(&o.ev, KILN_EVENT_OUT_OF_DATE, "new.js", "not in the manifest") == 1);
	CHECK(hm_seen(&o.ev, KILN_EVENT_MISSING_SIBLING, "miss.js", NULL) == 1);
	/* stale.js: its source changed, and so its sibling decodes to other bytes */
	CHECK(hm_seen(&o.ev, KILN_EVENT_OUT_OF_DATE, "stale.js", "changed since the manifest") == 1);
	CHECK(hm_seen(&o.ev, KILN_EVENT_STALE_SIBLING, "stale.js", NULL) == 1);
	CHECK(hm_seen(&o.ev, KILN_EVENT_SIBLING_METADATA, "meta.js", "mode differs") == 1);
	CHECK(hm_seen(&o.ev, KILN_EVENT_OUT_OF_DATE, "gone.js", "not in the tree") == 1);
	CHECK(hm_seen(&o.ev, KILN_EVENT_ORPHANED_SIBLING, "gone.js.gz", NULL) == 1);
	CHECK(hm_seen(&o.ev, KILN_EVENT_UNRECORDED_SIBLING, "unrec.js.gz", NULL) == 1);
	CHECK(hm_seen(&o.ev, KILN_EVENT_STALE_SIBLING, "unrec2.js.gz", "not written by kiln") == 1);
	CHECK(hm_seen(&o.ev, KILN_EVENT_STALE_SIBLING, "left.css.gz", "could not remove") == 1);
	CHECK(hm_seen(&o.ev, KILN_EVENT_OUT_OF_DATE, ".kiln-abcdef.tmp", "interrupted run") == 1);
	CHECK_MSG(o.problems == 12 && o.ev.n == 12, "%llu problems, %u events",
		  (unsigned long long)o.problems, o.ev.n);
	/* the mtime, too */
	CHECK(chmod(hm_path("meta.js.gz"), 0644) == 0 && chmod(hm_path("meta.js"), 0644) == 0);
	CHECK(utimensat(AT_FDCWD, hm_path("meta.js.gz"),
			(struct timespec[2]){ { 5, 0 }, { 5, 0 } }, 0) == 0);
	o = check(NULL);
	CHECK(hm_seen(&o.ev, KILN_EVENT_SIBLING_METADATA, "meta.js", "mtime differs") == 1);
	/* check writes nothing */
	CHECK(stat(hm_path("ok.js.gz"), &after) == 0 && after.st_ino == before.st_ino &&
	      after.st_mtim.tv_nsec == before.st_mtim.tv_nsec && hm_exists(".kiln-abcdef.tmp") &&
	      hm_exists("left.css.gz") && hm_exists("gone.js.gz") && hm_exists("unrec2.js.gz"));
}

static void test_manifest_problems(void)
{
	struct outcome o;
	char other[300];

	/* none */
	CHECK(rename(hm_path(KILN_MANIFEST_NAME), hm_path("../kept.json")) == 0);
	o = check(NULL);
	CHECK(o.problems == 1 && hm_seen(&o.ev, KILN_EVENT_NO_MANIFEST, KILN_MANIFEST_NAME, NULL) == 1);
	/* one that is not a manifest */
	hm_put(KILN_MANIFEST_NAME, "{\"files\": {}}", 13);
	o = check(NULL);
	CHECK(o.problems == 1 && hm_seen(&o.ev, KILN_EVENT_NO_MANIFEST, KILN_MANIFEST_NAME, NULL) == 1);
	CHECK(unlink(hm_path(KILN_MANIFEST_NAME)) == 0);
	/* another tree's, given by path */
	CHECK(mkdir(scratch_path(dir, "other"), 0755) == 0);
	snprintf(other, sizeof(other), "%s/other.json", dir);
	{
		FILE *f = fopen(other, "w");
		if (f) {
			fputs("{\"kiln_manifest\": 2, \"tree\": \"other\", \"files\": {}}\n", f);
			fclose(f);
		}
	}
	o = check(other);
	CHECK(o.problems == 1 && o.ev.n == 1 && o.ev.ev[0] == KILN_EVENT_OTHER_TREE &&
	      strcmp(o.ev.path[0], other) == 0);
	CHECK(rename(hm_path("../kept.json"), hm_path(KILN_MANIFEST_NAME)) == 0);
}

static void test_in_progress(void)
{
	int ready[2], go[2];
	struct outcome o;
	pid_t pid;
	char c;

	if (pipe(ready) || pipe(go))
		return;
	if ((pid = fork()) == 0) {
		int fd = open(hm_root, O_RDONLY | O_DIRECTORY);
		close(go[1]);
		close(ready[0]);
		if (fd < 0 || flock(fd, LOCK_EX) != 0 || write(ready[1], "x", 1) != 1)
			_exit(1);
		(void)!read(go[0], &c, 1);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	CHECK(read(ready[0], &c, 1) == 1);
	o = check(NULL);
	CHECK(o.status == KILN_ERR_BUSY && o.problems == 0 && o.ev.n == 1 &&
	      o.ev.ev[0] == KILN_EVENT_IN_PROGRESS);
	close(go[1]);
	close(ready[0]);
	waitpid(pid, NULL, 0);
	o = check(NULL);
	CHECK(o.status == KILN_OK && o.problems > 0); /* the damage, told again */
}

int main(void)
{
	if (!hm_begin(dir))
		return 1;
	test_clean_tree();
	test_every_problem();
	test_manifest_problems();
	test_in_progress();
	return scratch_end(dir, "test_check");
}
