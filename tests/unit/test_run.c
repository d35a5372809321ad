/*
 * test_run.c - a tree run (run.c) cancelled part way, as kiln_run_cancel()
 * (SIGINT, SIGTERM) does it, through the public API on a scratch tree: the
 * files it did not finish keep their siblings as the record says, and the
 * next run decides them again when the cancelled one ran under other
 * options.  The index the cancelled run leaves (index.h) must not vouch
 * for their old decisions under its new options: a re-run with gzip
 * turned on gives every file its .gz, which decodes to its source, and a
 * run after it rewrites nothing.
 */
#include "kiln.h"

#include "check.h"
#include "decode.h"
#include "handmade.h"
#include "scratch.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/tmp/kiln-run-XXXXXX";

#define NFILES 4
#define FILE_LEN 20000

struct cancel_at {
	struct kiln_run *run;
	unsigned files;    /* reports seen */
	unsigned after;    /* cancel after this many (0: never) */
};

static void on_file(void *user, const struct kiln_report *r)
{
	struct cancel_at *c = user;

	(void)r;
	if (++c->files == c->after)
		kiln_run_cancel(c->run);
}

/* A run of CODINGS on the tree, cancelled after AFTER files (0: not). */
static kiln_status run(unsigned codings, unsigned after)
{
	struct kiln_options opt;
	struct cancel_at c = { NULL, 0, after };
	struct kiln_callbacks cb = { .on_file = on_file, .user = &c };
	kiln_status st;

	kiln_options_init(&opt);
	opt.jobs = 1;
	opt.codings = codings;
	opt.servers = 0;
	if (!(c.run = kiln_run_new(&opt, &cb)))
		return KILN_ERR_NOMEM;
	st = kiln_run_tree(c.run, hm_root);
	kiln_run_free(c.run);
	return st;
}

static const char *name(unsigned i)
{
	static char buf[NFILES][16];

	snprintf(buf[i], sizeof(buf[i]), "f%u.js", i);
	return buf[i];
}

static char *sib(unsigned i, kiln_coding c)
{
	static char buf[2][600];
	static int k;
	char *p = buf[k++ % 2];

	snprintf(p, sizeof(buf[0]), "%s%s", hm_path(name(i)), kiln_coding_info(c)->suffix);
	return p;
}

static ino_t ino(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_ino : 0;
}

int main(void)
{
	kiln_coding gz = kiln_coding_find("gzip"), br = kiln_coding_find("br");
	uint8_t *text[NFILES];
	ino_t before[NFILES];
	unsigned without = 0;

	if (!hm_begin(dir) || gz < 0 || br < 0)
		return 1;
	for (unsigned i = 0; i < NFILES; i++) {
		text[i] = make_text(FILE_LEN + 1000 * i, 10 + i);
		hm_put(name(i), text[i], FILE_LEN + 1000 * i);
	}
	/* past the clock tick the files were made in: the first run stamps
	 * them all in its index */
	nanosleep(&(struct timespec){ 0, 100000000 }, NULL);

	CHECK(run(1u << br, 0) == KILN_OK);
	CHECK(access(hm_path(".kiln-manifest.json.index"), F_OK) == 0);
	for (unsigned i = 0; i < NFILES; i++)
		CHECK(access(sib(i, br), F_OK) == 0 && access(sib(i, gz), F_OK) != 0);

	/* gzip turned on, and the run cancelled after its first file */
	CHECK(run(1u << br | 1u << gz, 1) == KILN_ERR_CANCELLED);
	for (unsigned i = 0; i < NFILES; i++)
		without += access(sib(i, gz), F_OK) != 0;
	CHECK_MSG(without > 0, "the cancelled run left %u of %u files without .gz", without, NFILES);

	/* the next run decides those again */
	CHECK(run(1u << br | 1u << gz, 0) == KILN_OK);
	for (unsigned i = 0; i < NFILES; i++) {
		CHECK_MSG(file_decodes_to(sib(i, gz), "gzip", text[i], FILE_LEN + 1000 * i),
			  "%s: no .gz that decodes to it after a run with gzip on", name(i));
		CHECK(file_decodes_to(sib(i, br), "br", text[i], FILE_LEN + 1000 * i));
		before[i] = ino(sib(i, gz));
	}
	/* and the one after rewrites nothing */
	CHECK(run(1u << br | 1u << gz, 0) == KILN_OK);
	for (unsigned i = 0; i < NFILES; i++)
		CHECK(ino(sib(i, gz)) == before[i]);

	for (unsigned i = 0; i < NFILES; i++)
		free(text[i]);
	return scratch_end(dir, "test_run");
}
