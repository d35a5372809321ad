/*
 * archive.c - kiln_run_archive(): deploy archives in and out, with
 * libarchive.
 *
 * kiln_run_archive() never works on an archive in place.  It
 *  1. streams every entry of the input (an archive through archive_read, or
 *     a directory through its own walk: archive_read.c) into a private
 *     staging directory next to the output, validating each entry first and
 *     keeping its metadata (name, type, mode, mtime, link target, owner):
 *     archive_stage.c, archive_items.c;
 *  2. runs the staged tree through kiln_tree_compress(), the very code a
 *     directory goes through, with callbacks of its own that name the
 *     input's entries instead of staging paths and note what was kept
 *     (this file);
 *  3. writes the output from the metadata kept in step 1 and the bytes of
 *     the staging tree, sorted by path, into a temporary file that is
 *     fsync'ed and renamed into place (archive_write.c).
 * Why a staging tree rather than memory: the tree run works on files (the
 * previous manifest, the cache, the atomic writer), and with files memory
 * stays at one 64 KiB block per entry however large the input.  Reading
 * stops at the first refused entry, and then nothing is written.
 */
#include "archive_int.h"
#include "archive_version.h"
#include "server.h"

#include <archive.h>
#include <fcntl.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * libarchive converts names between the archive's charset and the current
 * locale's: in the C locale, a UTF-8 name read from a zip fails to convert
 * and one written to pax gets "hdrcharset=BINARY", which GNU tar warns
 * about.  Names are bytes to kiln, so archives are read and written with
 * this thread in C.UTF-8 (uselocale(3) is per thread: the tree run and its
 * glob matching keep the process's locale).
 */
static locale_t enter_utf8(void)
{
	locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);

	if (utf8 == (locale_t)0)
		return (locale_t)0;
	return uselocale(utf8);
}

static void leave_utf8(locale_t old)
{
	locale_t utf8;

	if (old == (locale_t)0)
		return;
	utf8 = uselocale(old);
	freelocale(utf8);
}

/* ---- step 2: the tree run, through callbacks of its own ---- */

/* An event path inside the tree, as the user knows it; malloc'ed. */
static char *user_path(const struct ctx *c, const char *path)
{
	size_t n = strlen(c->tree_path);
	const char *rel;
	char *entry, *p;

	if (strncmp(path, c->tree_path, n) != 0 || (path[n] != '/' && path[n] != '\0'))
		return strdup(path);
	rel = path + n + (path[n] == '/');
	if (c->is_dir)
		return *rel ? kiln_arc_cat3(c->input, "/", rel) : strdup(c->input);
	entry = *c->tree && *rel ? kiln_arc_cat3(c->tree, "/", rel)
				 : strdup(*c->tree ? c->tree : rel);
	if (!entry)
		return NULL;
	p = *entry ? kiln_arc_cat3(c->input, ": ", entry) : strdup(c->input);
	free(entry);
	return p;
}

static void wrap_plan(void *user, const char *root, uint64_t files, uint64_t bytes)
{
	struct ctx *c = user;

	(void)root;
	if (c->user.on_plan)
		c->user.on_plan(c->user.user, c->input, files, bytes);
}

static void wrap_progress(void *user, uint64_t files, uint64_t bytes)
{
	struct ctx *c = user;

	if (c->user.on_progress)
		c->user.on_progress(c->user.user, files, bytes);
}

static void wrap_file(void *user, const struct kiln_report *r)
{
	struct ctx *c = user;
	struct kiln_report m = *r;
	char *p = NULL;

	if (r->root && c->tree_path && strcmp(r->root, c->tree_path) != 0) {
		/* not the tree's (an earlier release, --previous): its own path,
		 * and no reason to leave the output unwritten */
		if (r->outcome == KILN_OUTCOME_ERROR && r->error.status != KILN_ERR_CANCELLED)
			c->failed_outside = true;
		if (c->user.on_file)
			c->user.on_file(c->user.user, r);
		return;
	}
	if (r->outcome == KILN_OUTCOME_ERROR && r->error.status != KILN_ERR_CANCELLED)
		c->failed = true;
	for (int k = 0; k < (int)kiln_coding_count(); k++) {
		if (r->coding[k].outcome != KILN_CODING_KEPT)
			continue;
		if (c->nkept == c->capkept) {
			size_t cap = c->capkept ? c->capkept * 2 : 256;
			struct kept *v = realloc(c->kept, cap * sizeof(*v));
			if (!v) {
				c->failed = true;
				break;
			}
			c->kept = v;
			c->capkept = cap;
		}
		c->kept[c->nkept].rel = strdup(r->path);
		c->kept[c->nkept].coding = k;
		c->kept[c->nkept].suffix = NULL;
		if (!c->kept[c->nkept].rel)
			c->failed = true;
		else
			c->nkept++;
	}
	m.root = c->input;
	if (!c->is_dir && *c->tree)
		p = *r->path ? kiln_arc_cat3(c->tree, "/", r->path) : strdup(c->tree);
	m.path = p ? p : r->path;
	m.in_archive = !c->is_dir;
	if (c->user.on_file)
		c->user.on_file(c->user.user, &m);
	free(p);
}

/* The dictionary delta at PATH (in the staging tree) goes into the output
 * like a sibling. */
static void keep_delta(struct ctx *c, const char *path)
{
	size_t n = strlen(c->tree_path), base;
	const char *rel = path + n + 1, *name;
	struct kept *k;

	if (strncmp(path, c->tree_path, n) != 0 || path[n] != '/') {
		c->failed = true;
		return;
	}
	name = strrchr(rel, '/');
	name = name ? name + 1 : rel;
	base = (size_t)(name - rel) + kiln_dict_sibling_base_len(name);
	if (c->nkept == c->capkept) {
		size_t cap = c->capkept ? c->capkept * 2 : 256;
		struct kept *v = realloc(c->kept, cap * sizeof(*v));
		if (!v) {
			c->failed = true;
			return;
		}
		c->kept = v;
		c->capkept = cap;
	}
	k = &c->kept[c->nkept];
	k->coding = -1;
	k->rel = strndup(rel, base);
	k->suffix = strdup(rel + base);
	if (!k->rel || !k->suffix) {
		free(k->rel);
		free(k->suffix);
		c->failed = true;
		return;
	}
	c->nkept++;
}

static void wrap_event(void *user, kiln_event ev, const char *path, int coding,
		       const struct kiln_error *err)
{
	struct ctx *c = user;
	char *p = user_path(c, path);

	if (ev == KILN_EVENT_REMOVE_FAILED || ev == KILN_EVENT_CACHE_FAILED ||
	    ev == KILN_EVENT_FOREIGN_STALE)
		c->failed = true;
	if (ev == KILN_EVENT_DICT_DELTA)
		keep_delta(c, path);
	if (c->user.on_event)
		c->user.on_event(c->user.user, ev, p ? p : path, coding, err);
	free(p);
}

static void wrap_artifact(void *user, const char *what, const char *path,
			  const struct kiln_error *err)
{
	struct ctx *c = user;
	char *p = user_path(c, path);

	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (err && err->status != KILN_OK)
		c->failed = true;
	else if (strcmp(what, "manifest") == 0)
		c->artifacts[c->nartifacts++] = KILN_MANIFEST_NAME;
	else
		for (unsigned sv = 0; sv < kiln_nservers; sv++)
			for (const struct kiln_server_file *f = kiln_servers[sv]->files; f->name; f++)
				if (strcmp(base, f->name) == 0 &&
				    c->nartifacts < sizeof(c->artifacts) / sizeof(c->artifacts[0]))
					c->artifacts[c->nartifacts++] = f->name;
	if (c->user.on_artifact)
		c->user.on_artifact(c->user.user, what, p ? p : path, err);
	free(p);
}

/* Does RUN name a path for the manifest or a snippet, other than those
 * opt.artifacts_dir gave?  In an archive they are OUT's. */
static bool paths_given(const struct kiln_run *run)
{
	if (run->opt.manifest_path && !run->artifacts_manifest)
		return true;
	for (unsigned sv = 0; sv < kiln_nservers; sv++)
		if (kiln_server_given(&run->opt, sv) && !(run->artifacts_servers & (1u << sv)))
			return true;
	return false;
}

/* With opt.artifacts_dir, the artifacts the run wrote at the staging
 * tree's top go there instead of into OUT: each is copied there (kiln's
 * own file, or a new one: outputs.h) and left out of the archive. */
static kiln_status artifacts_out(struct ctx *c)
{
	for (size_t k = 0; k < c->nartifacts; k++) {
		char *from = kiln_arc_cat3(c->tree_path, "/", c->artifacts[k]);
		char *to = kiln_path_join(c->run->opt.artifacts_dir, c->artifacts[k], "");
		struct kiln_error err = { 0 };
		char *text = NULL;
		int fd = from ? open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
		kiln_status st = KILN_ERR_NOMEM;
		struct stat sb;

		/* an artifact kiln just wrote: text, read whole */
		if (fd >= 0 && fstat(fd, &sb) == 0 && (text = malloc((size_t)sb.st_size + 1))) {
			ssize_t n = kiln_pread_full(fd, (uint8_t *)text, (size_t)sb.st_size, 0);
			text[n > 0 ? n : 0] = '\0';
		}
		if (fd >= 0)
			close(fd);
		if (to && text)
			st = kiln_write_artifact(c->temps, to, text, c->run->opt.fsync,
						 "cannot write", NULL, &err);
		else
			free(text);
		if (st != KILN_OK) {
			if (c->user.on_artifact)
				c->user.on_artifact(c->user.user, "artifact", to ? to : "", &err);
			c->failed = true;
		}
		free(from);
		free(to);
		if (st != KILN_OK)
			return KILN_ERR_IO;
	}
	c->artifacts_elsewhere = true;
	return KILN_OK;
}

static kiln_status run_tree(struct ctx *c)
{
	struct kiln_callbacks wrapped = {
		.on_plan = wrap_plan,
		.on_progress = wrap_progress,
		.on_file = wrap_file,
		.on_event = wrap_event,
		.on_artifact = wrap_artifact,
		.user = c,
	};
	kiln_status st;

	c->tree_path = *c->tree ? kiln_arc_cat3(c->stage.path, "/", c->tree)
				: strdup(c->stage.path);
	if (!c->tree_path)
		return KILN_ERR_NOMEM;
	c->user = c->run->cb;
	{
		/* the staging tree's artifacts at its top, as without
		 * artifacts_dir (artifacts_out() moves them there after): the
		 * paths it gave are set aside for this one tree */
		struct kiln_options saved = c->run->opt;
		if (c->run->artifacts_manifest)
			c->run->opt.manifest_path = NULL;
		for (unsigned sv = 0; sv < kiln_nservers; sv++)
			if (c->run->artifacts_servers & (1u << sv))
				memset((char *)&c->run->opt + kiln_servers[sv]->path_field, 0,
				       sizeof(const char *));
		c->run->staging = true;
		st = kiln_tree_compress(c->run, c->tree_path, &wrapped);
		c->run->staging = false;
		c->run->opt = saved;
	}
	return st;
}

/* ---- the whole ---- */

void kiln_archive_options_init(struct kiln_archive_options *aopt)
{
	memset(aopt, 0, sizeof(*aopt));
	aopt->format = KILN_ARCHIVE_AUTO;
	aopt->max_expanded_size = (uint64_t)4 << 30;
	aopt->max_expansion_ratio = 200.0;
	aopt->max_entries = 1000000;
}

const char *kiln_archive_library_version(void)
{
	return archive_version_string() + strlen("libarchive ");
}

/* Is OUTPUT's directory inside the directory INPUT? */
static bool output_inside(const char *input, const char *output)
{
	const char *slash = strrchr(output, '/');
	char *dir = slash ? strndup(output, (size_t)(slash - output) + 1) : strdup(".");
	char *rd = dir ? realpath(dir, NULL) : NULL, *ri = realpath(input, NULL);
	bool inside = false;

	if (rd && ri) {
		size_t n = strlen(ri);
		inside = strncmp(rd, ri, n) == 0 && (rd[n] == '\0' || rd[n] == '/' || n == 1);
	}
	free(dir);
	free(rd);
	free(ri);
	return inside;
}

/* Remove the staging directory and free everything C holds. */
static void free_ctx(struct ctx *c)
{
	kiln_arc_drop_stage(c);
	for (size_t i = 0; i < c->n; i++)
		kiln_arc_item_free(&c->items[i]);
	free(c->items);
	free(c->byname.slot);
	for (size_t i = 0; i < c->ninokeys; i++)
		free(c->inokeys[i]);
	free(c->inokeys);
	free(c->inoitem);
	free(c->byino.slot);
	for (size_t i = 0; i < c->nkept; i++) {
		free(c->kept[i].rel);
		free(c->kept[i].suffix);
	}
	free(c->kept);
	free(c->tree);
	free(c->tree_path);
	free(c->buf);
}

kiln_status kiln_run_archive(struct kiln_run *run, const char *input, const char *output,
			     const struct kiln_archive_options *aopt)
{
	struct ctx c;
	struct stat st;
	kiln_status ret;

	memset(&c, 0, sizeof(c));
	c.run = run;
	c.aopt = aopt;
	c.input = input;
	c.output = output;
	c.temps = &run->temps;
	c.root_fd = -1;
	c.format = aopt->format ? aopt->format : kiln_archive_format_from_name(output);
	if (c.format == KILN_ARCHIVE_AUTO || (unsigned)c.format > KILN_ARCHIVE_ZIP ||
	    paths_given(run) || run->opt.shard_count || !*output)
		return KILN_ERR_INVALID;
	c.is_dir = stat(input, &st) == 0 && S_ISDIR(st.st_mode);
	if (c.is_dir && output_inside(input, output)) {
		kiln_arc_report(&c, "", KILN_ERR_INVALID, 0,
				"the output is inside the input directory (give -o a path outside it)");
		return KILN_ERR_INVALID;
	}
	/* what the write at the end would refuse, said before the work: a
	 * link or a directory at OUT is never replaced (tempfile.c) */
	if (!run->opt.dry_run && lstat(output, &st) == 0 && !S_ISREG(st.st_mode)) {
		kiln_arc_report_output(&c, KILN_ERR_INVALID, 0,
				       S_ISLNK(st.st_mode)  ? "is a symbolic link, not replaced (give -o "
							      "the path it leads to, or a new one)"
				       : S_ISDIR(st.st_mode) ? "is a directory, not replaced (give -o a "
							      "file's path)"
							    : "is not a regular file, not replaced (give "
							      "-o a new path)");
		return KILN_ERR_INVALID;
	}
	if (!(c.buf = malloc(BLOCK_SIZE)))
		return KILN_ERR_NOMEM;
	if ((ret = kiln_arc_make_stage(&c)) != KILN_OK)
		goto out;
	if (c.is_dir) {
		ret = kiln_arc_read_directory(&c);
	} else {
		locale_t old = enter_utf8();
		ret = kiln_arc_read_archive(&c);
		leave_utf8(old);
	}
	if (ret == KILN_OK)
		ret = kiln_arc_choose_tree(&c);
	if (ret == KILN_OK)
		ret = kiln_arc_check_links(&c);
	if (ret == KILN_OK) {
		for (size_t i = 0; i < c.n; i++)
			c.items[i].leader = NONE;
		ret = run_tree(&c);
		/* what failed was outside the tree alone (an earlier release that
		 * cannot be read: no deltas from it): the output is still
		 * written, and the run still fails, after */
		if (ret == KILN_ERR_IO && !c.failed && c.failed_outside)
			ret = KILN_OK;
	}
	if (ret == KILN_OK && c.failed)
		ret = KILN_ERR_IO;
	if (ret == KILN_OK && run->opt.artifacts_dir && !run->opt.dry_run)
		ret = artifacts_out(&c);
	if (ret == KILN_OK && !run->opt.dry_run) {
		locale_t old = enter_utf8();
		ret = kiln_arc_write_output(&c);
		leave_utf8(old);
	}
	if (ret == KILN_OK && (c.failed || c.failed_outside))
		ret = KILN_ERR_IO;
out:
	free_ctx(&c);
	return ret;
}
