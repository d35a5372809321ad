/*
 * test_walk.c - listing a tree (walk.c): bytewise depth-first order that
 * does not depend on creation order, sibling names, kiln's own outputs (by
 * name at any depth, and by device and inode), include/exclude globs,
 * symbolic links followed or not, special files, an unreadable directory
 * as an error entry while the walk goes on, and names that are not UTF-8.
 * Every tree is built here under a mkdtemp directory, removed on success.
 */
#include "walk.h"

#include "check.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static char base[64];

/* BASE/REL */
static char *at(const char *rel)
{
	return scratch_path(base, rel);
}

/* A regular file BASE/REL whose content is REL itself, so that its size is
 * known without asking the walk. */
static void mkfile(const char *rel)
{
	int fd = open(at(rel), O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK_MSG(fd >= 0 && write(fd, rel, strlen(rel)) == (ssize_t)strlen(rel),
		  "cannot create %s", rel);
	if (fd >= 0)
		close(fd);
}

static void mkdir_rel(const char *rel)
{
	CHECK_MSG(mkdir(at(rel), 0755) == 0, "mkdir %s", rel);
}

static void mklink(const char *target, const char *rel)
{
	CHECK_MSG(symlink(target, at(rel)) == 0, "symlink %s", rel);
}

static const struct kiln_entry *find(const struct kiln_walk *w, const char *rel)
{
	for (size_t i = 0; i < w->n; i++)
		if (strcmp(w->v[i].rel, rel) == 0)
			return &w->v[i];
	return NULL;
}

/* Walk BASE/ROOT with OPT (defaults when NULL). */
static void walk(const char *root, const struct kiln_options *opt, const struct stat *own,
		 size_t nown, struct kiln_walk *w)
{
	struct kiln_options def;
	struct kiln_error err = { 0 };

	kiln_options_init(&def);
	memset(w, 0, sizeof(*w));
	CHECK_MSG(kiln_walk(at(root), opt ? opt : &def, own, nown, w, &err) == KILN_OK,
		  "walk of %s", root);
}

/* The entry REL exists and has outcome WANT. */
#define OUTCOME(w, rel, want)                                                             \
	do {                                                                              \
		const struct kiln_entry *e_ = find(w, rel);                               \
		CHECK_MSG(e_ && e_->outcome == (want), "%s: outcome %d, want %d", rel,    \
			  e_ ? (int)e_->outcome : -1, (int)(want));                        \
	} while (0)

static const char *const order_want[] = {
	"100%.txt", "B.txt", "a/y/x.txt", "a/z.txt", "a/\xc3\xa9.txt", "a-b.txt", "a.txt",
	"b.txt", "caf\xe9.txt", "new\nline.txt", "sp ace.txt", "~.txt", "\xff.txt",
};
#define NORDER (sizeof(order_want) / sizeof(order_want[0]))

/* Build ROOT with the names of order_want[] created in the order PERM gives. */
static void build_order_tree(const char *root, const size_t *perm)
{
	char rel[PATH_MAX];

	mkdir_rel(root);
	snprintf(rel, sizeof(rel), "%s/empty", root);
	mkdir_rel(rel);
	for (size_t k = 0; k < NORDER; k++) {
		const char *name = order_want[perm[k]];
		if (strncmp(name, "a/", 2) == 0) {
			snprintf(rel, sizeof(rel), "%s/a", root);
			mkdir(at(rel), 0755);
			snprintf(rel, sizeof(rel), "%s/a/y", root);
			mkdir(at(rel), 0755);
		}
		snprintf(rel, sizeof(rel), "%s/%s", root, name);
		mkfile(rel);
	}
}

/* The order is bytewise by name within each directory, depth first (so
 * "a/..." comes before "a-b.txt" although '-' < '/'), whatever order the
 * files were created in; directories themselves are not entries. */
static void test_order(void)
{
	static const size_t fwd[NORDER] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	static const size_t rev[NORDER] = { 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 };
	static const size_t mix[NORDER] = { 7, 2, 12, 0, 9, 4, 11, 1, 6, 3, 10, 5, 8 };
	const size_t *perms[] = { fwd, rev, mix };
	const char *roots[] = { "order-fwd", "order-rev", "order-mix" };

	for (int t = 0; t < 3; t++) {
		struct kiln_walk w;
		build_order_tree(roots[t], perms[t]);
		walk(roots[t], NULL, NULL, 0, &w);
		CHECK_MSG(w.n == NORDER, "%s: %zu entries, want %zu", roots[t], w.n, NORDER);
		for (size_t i = 0; i < w.n && i < NORDER; i++) {
			const struct kiln_entry *e = &w.v[i];
			char rel[PATH_MAX];
			snprintf(rel, sizeof(rel), "%s/%s", roots[t], order_want[i]);
			CHECK_MSG(strcmp(e->rel, order_want[i]) == 0, "%s: entry %zu is %s, want %s",
				  roots[t], i, e->rel, order_want[i]);
			CHECK(e->outcome == KILN_OUTCOME_CANDIDATE);
			CHECK(S_ISREG(e->st.st_mode));
			/* each file holds its own path under BASE */
			CHECK_MSG(e->st.st_size == (off_t)strlen(rel), "%s size", e->rel);
			CHECK(!e->via_link);
		}
		kiln_walk_free(&w);
		CHECK(w.n == 0 && w.v == NULL);
	}
}

static void test_siblings(void)
{
	static const char *const files[] = {
		"sib/app.js", "sib/app.js.gz", "sib/app.js.br", "sib/app.js.zst",
		"sib/lonely.css.gz", "sib/lonely.css.br", "sib/.gz", "sib/x.gz", "sib/x.gz.gz",
		"sib/sub/app.js.gz", "sib/caf\xe9.js", "sib/caf\xe9.js.gz",
	};
	struct kiln_options opt;
	const char *ex[] = { "*.gz" };
	struct kiln_walk w;

	mkdir_rel("sib");
	mkdir_rel("sib/sub");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		mkfile(files[i]);
	walk("sib", NULL, NULL, 0, &w);
	CHECK(w.n == 12);
	OUTCOME(&w, "app.js", KILN_OUTCOME_CANDIDATE);
	OUTCOME(&w, "app.js.gz", KILN_OUTCOME_SIBLING);
	OUTCOME(&w, "app.js.br", KILN_OUTCOME_SIBLING);
	OUTCOME(&w, "app.js.zst", KILN_OUTCOME_SIBLING); /* a reserved suffix */
	OUTCOME(&w, "lonely.css.gz", KILN_OUTCOME_CANDIDATE); /* no lonely.css */
	OUTCOME(&w, "lonely.css.br", KILN_OUTCOME_CANDIDATE);
	OUTCOME(&w, ".gz", KILN_OUTCOME_CANDIDATE);     /* nothing before the suffix */
	OUTCOME(&w, "x.gz", KILN_OUTCOME_CANDIDATE);    /* no "x" */
	OUTCOME(&w, "x.gz.gz", KILN_OUTCOME_SIBLING);   /* "x.gz" is there */
	OUTCOME(&w, "sub/app.js.gz", KILN_OUTCOME_CANDIDATE); /* app.js is one level up */
	OUTCOME(&w, "caf\xe9.js", KILN_OUTCOME_CANDIDATE);
	OUTCOME(&w, "caf\xe9.js.gz", KILN_OUTCOME_SIBLING);
	kiln_walk_free(&w);

	/* a sibling is a sibling before it is excluded */
	kiln_options_init(&opt);
	opt.exclude = ex;
	opt.n_exclude = 1;
	walk("sib", &opt, NULL, 0, &w);
	OUTCOME(&w, "app.js.gz", KILN_OUTCOME_SIBLING);
	OUTCOME(&w, "lonely.css.gz", KILN_OUTCOME_EXCLUDED);
	OUTCOME(&w, "app.js", KILN_OUTCOME_CANDIDATE);
	kiln_walk_free(&w);
}

static void test_own(void)
{
	static const char *const own_names[] = {
		"kiln-manifest.json", "kiln.nginx.conf", ".kiln-a1B2c3.tmp", ".kiln-journal-Zz9Yy8",
	};
	static const char *const near[] = {
		".kiln-a1B2c.tmp", ".kiln-a1B2c3d.tmp", ".kiln-journal-abcde", ".kiln-journal-abcdefg",
		"kiln-manifest.json.bak", "xkiln.nginx.conf", "Kiln-manifest.json",
	};
	struct kiln_options opt;
	struct stat own[1];
	struct kiln_walk w;
	char rel[PATH_MAX];

	mkdir_rel("own");
	mkdir_rel("own/sub");
	mkdir_rel("own/sub/deep");
	mkdir_rel("own/meta");
	for (size_t i = 0; i < 4; i++) {
		snprintf(rel, sizeof(rel), "own/%s", own_names[i]);
		mkfile(rel);
		snprintf(rel, sizeof(rel), "own/sub/deep/%s", own_names[i]);
		mkfile(rel);
	}
	for (size_t i = 0; i < sizeof(near) / sizeof(near[0]); i++) {
		snprintf(rel, sizeof(rel), "own/%s", near[i]);
		mkfile(rel);
	}
	mkfile("own/meta/out.json");
	mkfile("own/meta/other.json");
	CHECK(link(at("own/meta/out.json"), at("own/meta/hard.json")) == 0);
	mklink("out.json", "own/meta/alias.json");
	CHECK(stat(at("own/meta/out.json"), &own[0]) == 0);

	walk("own", NULL, own, 1, &w);
	for (size_t i = 0; i < 4; i++) {
		snprintf(rel, sizeof(rel), "sub/deep/%s", own_names[i]);
		OUTCOME(&w, own_names[i], KILN_OUTCOME_SIBLING);
		OUTCOME(&w, rel, KILN_OUTCOME_SIBLING);
	}
	for (size_t i = 0; i < sizeof(near) / sizeof(near[0]); i++)
		OUTCOME(&w, near[i], KILN_OUTCOME_CANDIDATE);
	OUTCOME(&w, "meta/out.json", KILN_OUTCOME_SIBLING);   /* by device and inode */
	OUTCOME(&w, "meta/hard.json", KILN_OUTCOME_SIBLING);  /* same inode */
	OUTCOME(&w, "meta/other.json", KILN_OUTCOME_CANDIDATE);
	OUTCOME(&w, "meta/alias.json", KILN_OUTCOME_SYMLINK);
	kiln_walk_free(&w);

	/* without OWN, the artifact written under another name is an input */
	walk("own", NULL, NULL, 0, &w);
	OUTCOME(&w, "meta/out.json", KILN_OUTCOME_CANDIDATE);
	kiln_walk_free(&w);

	/* a followed link reaches OWN's device and inode: "a file with one's
	 * device and inode is a kiln output, never an input" (walk.h) */
	kiln_options_init(&opt);
	opt.follow_symlinks = true;
	walk("own", &opt, own, 1, &w);
	OUTCOME(&w, "meta/out.json", KILN_OUTCOME_SIBLING);
	OUTCOME(&w, "meta/alias.json", KILN_OUTCOME_SIBLING);
	kiln_walk_free(&w);
}

static void test_globs(void)
{
	static const char *const files[] = {
		"glob/a.js", "glob/a.css", "glob/sub/b.js", "glob/sub/b.css", "glob/sub/deep/c.js",
		"glob/vendor/v.js",
	};
	const char *js[] = { "*.js" }, *sub[] = { "sub/*" }, *dot[] = { "./vendor/*" };
	const char *bjs[] = { "b.js" }, *deep[] = { "sub/deep/*" }, *subcss[] = { "sub/*.css" };
	struct {
		const char *const *inc, *const *exc;
		const char *cand; /* the candidates, as one string "|x|y|" */
	} cases[] = {
		{ js, NULL, "|a.js|sub/b.js|sub/deep/c.js|vendor/v.js|" },
		{ NULL, sub, "|a.js|a.css|vendor/v.js|" },    /* '*' matches '/' */
		{ NULL, dot, "|a.js|a.css|sub/b.js|sub/b.css|sub/deep/c.js|" },
		{ NULL, bjs, "|a.js|a.css|sub/b.css|sub/deep/c.js|vendor/v.js|" },
		{ js, deep, "|a.js|sub/b.js|vendor/v.js|" }, /* exclude wins */
		{ subcss, NULL, "|sub/b.css|" },
	};

	mkdir_rel("glob");
	mkdir_rel("glob/sub");
	mkdir_rel("glob/sub/deep");
	mkdir_rel("glob/vendor");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		mkfile(files[i]);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct kiln_options opt;
		struct kiln_walk w;
		kiln_options_init(&opt);
		opt.include = cases[c].inc;
		opt.n_include = cases[c].inc ? 1 : 0;
		opt.exclude = cases[c].exc;
		opt.n_exclude = cases[c].exc ? 1 : 0;
		walk("glob", &opt, NULL, 0, &w);
		CHECK(w.n == 6);
		for (size_t i = 0; i < w.n; i++) {
			char key[PATH_MAX];
			bool want_cand;
			snprintf(key, sizeof(key), "|%s|", w.v[i].rel);
			want_cand = strstr(cases[c].cand, key) != NULL;
			CHECK_MSG(w.v[i].outcome == (want_cand ? KILN_OUTCOME_CANDIDATE
								: KILN_OUTCOME_EXCLUDED),
				  "case %zu: %s outcome %d", c, w.v[i].rel, (int)w.v[i].outcome);
		}
		kiln_walk_free(&w);
	}
}

/* Which globs matched any file: every glob is tried on every file, so a
 * mistyped one is known even when another glob decides the file. */
static void test_globs_used(void)
{
	const char *inc[] = { "*.js", "*.nomatch", "sub/*" };
	const char *exc[] = { "sub/deep/*", "*.zzz", "a.css" };
	struct kiln_options opt;
	struct kiln_walk w;

	kiln_options_init(&opt);
	opt.include = inc;
	opt.n_include = 3;
	opt.exclude = exc;
	opt.n_exclude = 3;
	walk("glob", &opt, NULL, 0, &w);
	CHECK(w.glob_used != NULL);
	if (w.glob_used) {
		CHECK(w.glob_used[0] && !w.glob_used[1] && w.glob_used[2]);
		CHECK(w.glob_used[3] && !w.glob_used[4] && w.glob_used[5]);
	}
	OUTCOME(&w, "a.css", KILN_OUTCOME_EXCLUDED);
	OUTCOME(&w, "sub/b.css", KILN_OUTCOME_CANDIDATE);
	kiln_walk_free(&w);
}

static void build_links(void)
{
	char abs[PATH_MAX];

	mkfile("outside.txt");
	mkdir_rel("links2"); /* shares "links" as a prefix: still outside */
	mkfile("links2/f.txt");
	mkdir_rel("links");
	mkdir_rel("links/dir");
	mkfile("links/real.js");
	mkfile("links/dir/inner.js");
	mkfile("links/l-file.js.gz");
	CHECK(mkfifo(at("links/fifo"), 0644) == 0);
	snprintf(abs, sizeof(abs), "%s", at("links/real.js"));
	mklink("real.js", "links/l-file.js");
	mklink(abs, "links/l-abs.js");
	mklink("l-file.js", "links/l-chain.js");
	mklink("dir", "links/l-dir");
	mklink("nowhere", "links/l-dangling");
	mklink("../outside.txt", "links/l-out");
	mklink("../links2/f.txt", "links/l-prefix");
	mklink("..", "links/l-outdir");
	mklink("l-loop2", "links/l-loop1");
	mklink("l-loop1", "links/l-loop2");
	mklink("l-self", "links/l-self");
	mklink("fifo", "links/l-fifo");
	mklink("links", "links-alias");
}

static void check_error(const struct kiln_walk *w, const char *rel, kiln_status status, int errnum)
{
	const struct kiln_entry *e = find(w, rel);

	CHECK_MSG(e && e->outcome == KILN_OUTCOME_ERROR && e->err.status == status &&
		  (errnum == 0 || e->err.errnum == errnum) && e->err.what,
		  "%s: outcome %d status %d errnum %d", rel, e ? (int)e->outcome : -1,
		  e ? (int)e->err.status : -1, e ? e->err.errnum : -1);
}

static void test_links(void)
{
	static const char *const link_names[] = {
		"l-file.js", "l-abs.js", "l-chain.js", "l-dir", "l-dangling", "l-out",
		"l-prefix", "l-outdir", "l-loop1", "l-loop2", "l-self", "l-fifo",
	};
	struct kiln_options opt;
	struct kiln_walk w;
	struct stat real;

	build_links();
	CHECK(stat(at("links/real.js"), &real) == 0);

	/* not followed: every link is reported as one, with its lstat */
	walk("links", NULL, NULL, 0, &w);
	for (size_t i = 0; i < sizeof(link_names) / sizeof(link_names[0]); i++) {
		const struct kiln_entry *e = find(&w, link_names[i]);
		CHECK_MSG(e && e->outcome == KILN_OUTCOME_SYMLINK && S_ISLNK(e->st.st_mode) &&
			  !e->via_link, "%s not reported as a link", link_names[i]);
	}
	CHECK(find(&w, "l-dir/inner.js") == NULL);
	OUTCOME(&w, "dir/inner.js", KILN_OUTCOME_CANDIDATE);
	OUTCOME(&w, "real.js", KILN_OUTCOME_CANDIDATE);
	OUTCOME(&w, "fifo", KILN_OUTCOME_SPECIAL);
	OUTCOME(&w, "l-file.js.gz", KILN_OUTCOME_SIBLING); /* the link's sibling */
	CHECK(w.n == 16);
	kiln_walk_free(&w);

	kiln_options_init(&opt);
	opt.follow_symlinks = true;
	for (int pass = 0; pass < 2; pass++) {
		/* the second pass walks the tree through a link to its root */
		walk(pass ? "links-alias" : "links", &opt, NULL, 0, &w);
		for (size_t i = 0; i < 3; i++) {
			const struct kiln_entry *e = find(&w, link_names[i]);
			CHECK_MSG(e && e->outcome == KILN_OUTCOME_CANDIDATE && e->via_link &&
				  S_ISREG(e->st.st_mode) && e->st.st_ino == real.st_ino &&
				  e->st.st_dev == real.st_dev, "%s not followed to real.js",
				  link_names[i]);
		}
		OUTCOME(&w, "l-dir", KILN_OUTCOME_SYMLINK); /* not descended */
		CHECK(find(&w, "l-dir/inner.js") == NULL);
		check_error(&w, "l-dangling", KILN_ERR_IO, ENOENT);
		check_error(&w, "l-out", KILN_ERR_UNSAFE, 0);
		check_error(&w, "l-prefix", KILN_ERR_UNSAFE, 0);
		check_error(&w, "l-outdir", KILN_ERR_UNSAFE, 0);
		check_error(&w, "l-loop1", KILN_ERR_IO, ELOOP);
		check_error(&w, "l-loop2", KILN_ERR_IO, ELOOP);
		check_error(&w, "l-self", KILN_ERR_IO, ELOOP);
		OUTCOME(&w, "l-fifo", KILN_OUTCOME_SPECIAL);
		CHECK(find(&w, "l-fifo") && find(&w, "l-fifo")->via_link);
		OUTCOME(&w, "real.js", KILN_OUTCOME_CANDIDATE);
		CHECK(find(&w, "real.js") && !find(&w, "real.js")->via_link);
		OUTCOME(&w, "l-file.js.gz", KILN_OUTCOME_SIBLING);
		CHECK(w.n == 16);
		kiln_walk_free(&w);
	}
}

static void test_special(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct kiln_walk w;

	mkdir_rel("special");
	mkfile("special/plain.txt");
	CHECK(mkfifo(at("special/pipe"), 0644) == 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", at("special/sock"));
	CHECK(s >= 0 && bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	walk("special", NULL, NULL, 0, &w); /* a FIFO opened for reading would hang here */
	CHECK(w.n == 3);
	OUTCOME(&w, "pipe", KILN_OUTCOME_SPECIAL);
	OUTCOME(&w, "sock", KILN_OUTCOME_SPECIAL);
	OUTCOME(&w, "plain.txt", KILN_OUTCOME_CANDIDATE);
	kiln_walk_free(&w);
	if (s >= 0)
		close(s);
}

/* The walk of "locked", as a user who cannot open locked/locked. */
static void walk_locked(void)
{
	static const char *const want[] = { "a.txt", "locked", "m.txt", "z/ok.txt" };
	struct kiln_walk w;

	walk("locked", NULL, NULL, 0, &w);
	CHECK_MSG(w.n == 4, "%zu entries", w.n);
	for (size_t i = 0; i < w.n && i < 4; i++)
		CHECK_MSG(strcmp(w.v[i].rel, want[i]) == 0, "entry %zu is %s", i, w.v[i].rel);
	OUTCOME(&w, "a.txt", KILN_OUTCOME_CANDIDATE);
	check_error(&w, "locked", KILN_ERR_IO, EACCES);
	OUTCOME(&w, "m.txt", KILN_OUTCOME_CANDIDATE);
	OUTCOME(&w, "z/ok.txt", KILN_OUTCOME_CANDIDATE);
	CHECK(find(&w, "locked/secret.txt") == NULL);
	kiln_walk_free(&w);
}

/* An unreadable directory is an error entry and the walk goes on.  Root
 * reads every directory, so as root the walk runs in a child that has
 * become nobody; the child's tally comes back through a pipe. */
static void test_unreadable(void)
{
	int p[2], status = 0, got[2] = { 0, 0 };
	pid_t pid;

	mkdir_rel("locked");
	mkdir_rel("locked/locked");
	mkdir_rel("locked/z");
	mkfile("locked/a.txt");
	mkfile("locked/m.txt");
	mkfile("locked/z/ok.txt");
	mkfile("locked/locked/secret.txt");
	CHECK(chmod(at("locked/locked"), 0) == 0);
	if (geteuid() != 0) {
		walk_locked();
		chmod(at("locked/locked"), 0755);
		return;
	}
	CHECK(pipe(p) == 0);
	fflush(stderr);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		check_count = check_failures = 0;
		CHECK(setgroups(0, NULL) == 0);
		CHECK(setgid(65534) == 0);
		CHECK(setuid(65534) == 0);
		CHECK(geteuid() == 65534);
		walk_locked();
		got[0] = check_count;
		got[1] = check_failures;
		if (write(p[1], got, sizeof(got)) != sizeof(got))
			_exit(2);
		_exit(0);
	}
	close(p[1]);
	CHECK(read(p[0], got, sizeof(got)) == sizeof(got));
	close(p[0]);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_MSG(got[0] >= 10, "the child ran %d checks", got[0]);
	check_count += got[0];
	check_failures += got[1];
	chmod(at("locked/locked"), 0755);
}

static void test_root_errors(void)
{
	struct kiln_options opt;
	struct kiln_error err = { 0 };
	struct kiln_walk w = { 0 };

	kiln_options_init(&opt);
	CHECK(kiln_walk(at("no-such-dir"), &opt, NULL, 0, &w, &err) == KILN_ERR_IO);
	CHECK(err.status == KILN_ERR_IO && err.errnum == ENOENT && err.what);
	CHECK(w.n == 0);
	kiln_walk_free(&w);
	mkfile("plain-file");
	memset(&err, 0, sizeof(err));
	CHECK(kiln_walk(at("plain-file"), &opt, NULL, 0, &w, &err) == KILN_ERR_IO);
	CHECK(err.status == KILN_ERR_IO && err.errnum == ENOTDIR && err.what);
	CHECK(w.n == 0);
	kiln_walk_free(&w);
	/* only a regular file gets ENOTDIR (the CLI's hint for an archive) */
	CHECK(mkfifo(at("a-fifo"), 0600) == 0);
	memset(&err, 0, sizeof(err));
	CHECK(kiln_walk(at("a-fifo"), &opt, NULL, 0, &w, &err) == KILN_ERR_IO);
	CHECK(err.status == KILN_ERR_IO && err.errnum == 0 && err.what &&
	      strcmp(err.what, "not a directory or archive (a FIFO)") == 0);
	CHECK(w.n == 0);
	kiln_walk_free(&w);
}

int main(void)
{
	umask(022);
	strcpy(base, "/tmp/kiln-test-walk-XXXXXX");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	chmod(base, 0755); /* the unprivileged child must reach the trees */
	test_order();
	test_siblings();
	test_own();
	test_globs();
	test_globs_used();
	test_links();
	test_special();
	test_unreadable();
	test_root_errors();
	if (check_failures == 0)
		scratch_remove(base);
	else
		fprintf(stderr, "test_walk: trees left in %s\n", base);
	return check_exit("test_walk");
}
