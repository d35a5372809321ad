/*
 * args.c - the kiln command line: the help, the option table (the fixed
 * options plus three to six per coding of the library's table) and the
 * parsing that turns ARGV into kiln_options and kiln_archive_options.
 */
#include "kiln.h"

#include "args.h"
#include "shard_arg.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* Help text is laid out for an 80-column terminal: option names in a
 * column of their own, descriptions wrapped at HELP_WIDTH. */
enum { HELP_INDENT = 27, HELP_WIDTH = 79 };

/* One option of the help: NAME ("-x, --long ARG", or "" to go on with the
 * option above) in its column, then TEXT, wrapped at word boundaries (on
 * the next line when NAME is too long for the column). */
static void help_line(FILE *f, const char *name, const char *text)
{
	size_t col = 0;

	/* short options sit two columns left of the long ones */
	if (*name)
		col = (size_t)fprintf(f, "%s%s", name[1] != '-' ? "  " : "      ", name);
	if (col + 1 > HELP_INDENT) {
		fputc('\n', f);
		col = 0;
	}
	while (*text) {
		size_t room = HELP_WIDTH - HELP_INDENT, n = strlen(text);
		if (n > room) {
			n = room;
			while (n > 0 && text[n] != ' ')
				n--;
			if (n == 0)
				n = strcspn(text, " ");
		}
		fprintf(f, "%*s%.*s\n", (int)(HELP_INDENT - col), "", (int)n, text);
		col = 0;
		text += n;
		while (*text == ' ')
			text++;
	}
}

/* The options that do not depend on the codec table: NAME, TEXT; a NULL
 * NAME is a heading. */
static const char *const fixed_help[][2] = {
	{ NULL, "Choosing files:" },
	{ "--min-size N", "files smaller than N bytes are not compressed (K, M, G suffixes; "
			  "default 256)" },
	{ "--max-ratio R", "keep a sibling only if its size <= R * original, 0 < R <= 1 "
			   "(default 0.95; beside any other kept sibling, the first coding's is "
			   "kept whenever it is smaller at all)" },
	{ "--include GLOB", "only files matching GLOB (repeatable)" },
	{ "--exclude GLOB", "skip files matching GLOB (repeatable); a glob that matches no "
			    "file is a warning, and a run whose globs would remove every sibling "
			    "is refused without --force" },
	{ "--follow-symlinks", "follow links to files inside DIR (a link outside DIR, a "
			       "dangling link or a loop is an error)" },
	{ NULL, "Running:" },
	{ "-j, --jobs N", "worker threads, 1..4096 (default: online CPUs)" },
	{ "--verify", "decode every kept sibling and compare it with its source" },
	{ "--reread", "read every file (check: decode every sibling) instead of trusting what "
		      "the last run saw of those unchanged since" },
	{ "-n, --dry-run", "decide (encoding in memory) and report; write nothing" },
	{ "-f, --force", "ignore the previous run: encode every file again; run even when the "
			 "globs would remove every sibling" },
	{ "--cache DIR", "reuse encodings from a content cache kept between runs (also "
			 "KILN_CACHE_DIR)" },
	{ "--cache-max-size N", "keep the cache under N bytes (K, M, G; default 1G)" },
	{ "--max-file-size N", "refuse to compress larger files (K, M, G; default 0: no limit)" },
	{ "--stream-size N", "stream files of N bytes or more instead of holding them in memory "
			     "(gzip via zlib -9; K, M, G; default 64M; 0: never)" },
	{ "--fsync", "make every write durable before renaming it into place" },
	{ "--no-wait", "when another kiln is changing DIR, fail at once (exit 1) instead of "
		       "waiting for it" },
	{ "--shard K/N", "encode only shard K of N (by a hash of each file's path) and write "
			 "its part of the manifest, for 'kiln merge'; 'auto': K and N from "
			 "GitLab, CircleCI, Buildkite or Azure Pipelines" },
	{ NULL, "Archives (with -o):" },
	{ "-o, --output OUT", "write the archive OUT (atomically) instead of siblings in place" },
	{ "--format F", "tar, tar.gz, tar.zst, tar.xz or zip (default: from OUT's suffix)" },
	{ "--keep-owner", "keep owners (default: uid 0, gid 0, no names)" },
	{ "--max-expanded-size N", "refuse an archive expanding beyond N bytes in total (K, M, "
				   "G; 0: no limit; default 4G)" },
	{ "--max-expansion-ratio R", "refuse an archive expanding more than R times its size, "
				     "once past 64M (0: no limit; default 200)" },
	{ NULL, "Artifacts (written after each DIR):" },
	{ "--manifest PATH", "write the JSON manifest to PATH (default DIR/kiln-manifest.json)" },
	{ "--no-manifest", "keep no manifest (refused on a tree that has one)" },
	{ "--server LIST", "write snippets for these servers: nginx, caddy, apache, comma-separated "
			   "(default nginx)" },
	{ "--nginx-conf PATH", "write the nginx snippet to PATH (default DIR/kiln.nginx.conf; its "
			       "http {} part beside it, NAME.http.conf)" },
	{ "--caddy-conf PATH", "write the Caddy snippet to PATH (default DIR/kiln.caddy.conf)" },
	{ "--apache-conf PATH", "write the Apache snippet to PATH (default DIR/kiln.apache.conf)" },
	{ "--no-nginx-conf", "do not write the nginx snippet" },
	{ "--nginx-brotli-static", "the nginx has brotli_static: a gzip and br run without deltas "
				   "gets the snippet that lets gzip_static and brotli_static send "
				   "the siblings" },
	{ "--artifacts DIR", "write the manifest and the snippets into DIR instead of the tree "
			     "(or OUT), under their default names" },
	{ "--url-prefix PATH", "the URL path DIR is served at, for the snippets (default /)" },
	{ "--immutable GLOB", "serve files matching GLOB as immutable too, beside the fingerprinted "
			      "ones (repeatable; --mutable wins)" },
	{ "--mutable GLOB", "never serve files matching GLOB as immutable, whatever the evidence "
			    "(repeatable)" },
	{ "--fingerprints FILE", "a bundler's manifest saying which outputs hold a content hash "
				 "(Vite, webpack, esbuild, Next.js; repeatable)" },
	{ "--no-cache-control", "leave Cache-Control out of the snippets" },
	{ "--previous PATH", "an earlier release of DIR as deployed (a directory or a deploy archive; repeatable, "
			     "newest first, at most 8): each fingerprinted file whose earlier "
			     "version differs gets a NAME.<id>.dcz delta against it (RFC 9842 dcz, "
			     "zstd 19), served to browsers that hold that version" },
	{ NULL, "Output:" },
	{ "--progress", "show a progress line (default when stderr is a terminal)" },
	{ "--no-progress", "never show the progress line" },
	{ "-q, --quiet", "print errors only" },
	{ "-v, --verbose", "print one line per file" },
	{ "--json", "print the summary (check: the problems) as one JSON object on stdout" },
	{ "-h, --help", "print this help and exit" },
	{ "-V, --version", "print versions and exit" },
};

static void usage(FILE *f)
{
	fputs("usage: kiln [compress] [OPTIONS] DIR...\n"
	      "       kiln [compress] [OPTIONS] ARCHIVE|DIR -o OUT\n"
	      "       kiln check [OPTIONS] DIR...\n"
	      "       kiln clean [OPTIONS] DIR...\n"
	      "       kiln merge [OPTIONS] DIR...\n"
	      "       kiln serve [SERVE-OPTIONS] DIR   (see kiln serve --help)\n"
	      "Write precompressed siblings next to the web assets under each DIR; check a\n"
	      "tree against its manifest without writing (exit 3 if it does not match);\n"
	      "remove everything kiln wrote; merge the parts of --shard runs into the\n"
	      "manifest and snippet one run would write.  With -o, read an archive (tar,\n"
	      "zip, 7z, cpio, ...) or a directory and write the archive OUT with the\n"
	      "siblings added.  Give each DIR once: the same directory twice, or one inside\n"
	      "another, is refused.  kiln serve serves a tree from its manifest over HTTP.\n"
	      "\n"
	      "Encodings (at least one):\n",
	      f);
	for (kiln_coding c = 0; c < (kiln_coding)kiln_coding_count(); c++) {
		const struct kiln_coding_info *i = kiln_coding_info(c);
		char opt[64], text[160];
		snprintf(opt, sizeof(opt), "--%s", i->word);
		snprintf(text, sizeof(text), "write NAME%s siblings%s: %s", i->suffix,
			 i->default_on ? " (default)" : "", i->summary);
		help_line(f, opt, text);
		snprintf(opt, sizeof(opt), "--no-%s", i->word);
		snprintf(text, sizeof(text), "do not write NAME%s siblings%s", i->suffix,
			 i->default_on ? "" : " (default)");
		help_line(f, opt, text);
		snprintf(opt, sizeof(opt), "--%s-%s N", i->word, i->level_word);
		snprintf(text, sizeof(text), "%s %d..%d (default %d)", i->level_word, i->level_min,
			 i->level_max, i->level_default);
		help_line(f, opt, text);
		if (!i->extra_word)
			continue;
		snprintf(opt, sizeof(opt), "--%s", i->extra_word);
		help_line(f, opt, i->extra_summary);
		snprintf(opt, sizeof(opt), "--no-%s", i->extra_word);
		help_line(f, opt, "do not (default)");
		snprintf(opt, sizeof(opt), "--%s-%s N", i->extra_word, i->extra_param);
		snprintf(text, sizeof(text), "%s %d..%d (default %d)", i->extra_param,
			 i->extra_min, i->extra_max, i->extra_default);
		help_line(f, opt, text);
	}
	help_line(f, "--best", "every coding, each at its best (slowest) settings");
	for (size_t k = 0; k < sizeof(fixed_help) / sizeof(fixed_help[0]); k++) {
		if (!fixed_help[k][0])
			fprintf(f, "%s\n", fixed_help[k][1]);
		else
			help_line(f, fixed_help[k][0], fixed_help[k][1]);
	}
	fputs("\n"
	      "Exit status: 0 success, 1 a file or DIR failed, 2 usage error,\n"
	      "3 (check) the tree does not match its manifest.\n",
	      f);
}

__attribute__((format(printf, 1, 2)))
int usage_error(const char *fmt, ...)
{
	va_list ap;


	fputs("kiln: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'kiln --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

/* Does OPT put a snippet elsewhere (--nginx-conf and the like)? */
bool names_outputs(const struct kiln_options *opt)
{
	return opt->nginx_conf_path || opt->caddy_conf_path || opt->apache_conf_path;
}

static bool parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* A byte count with an optional K, M or G (binary) suffix. */
static bool parse_size(const char *s, uint64_t *out)
{
	char digits[32];
	size_t n = strlen(s);
	uint64_t v;
	int shift;

	if (n == 0 || n >= sizeof(digits))
		return false;
	memcpy(digits, s, n + 1);
	switch (digits[n - 1]) {
	case 'K': case 'k': shift = 10; break;
	case 'M': case 'm': shift = 20; break;
	case 'G': case 'g': shift = 30; break;
	default: shift = 0; break;
	}
	if (shift)
		digits[--n] = '\0';
	if (!parse_u64(digits, 0, UINT64_MAX >> shift, &v))
		return false;
	*out = v << shift;
	return true;
}

enum {
	OPT_MIN_SIZE = 256, OPT_MAX_RATIO, OPT_INCLUDE, OPT_EXCLUDE, OPT_FOLLOW, OPT_VERIFY,
	OPT_PROGRESS, OPT_NO_PROGRESS, OPT_MANIFEST, OPT_NO_MANIFEST, OPT_NGINX_CONF,
	OPT_CADDY_CONF, OPT_APACHE_CONF, OPT_NO_WAIT, OPT_NO_NGINX_CONF, OPT_JSON, OPT_CACHE, OPT_CACHE_MAX_SIZE, OPT_MAX_FILE_SIZE, OPT_STREAM_SIZE,
	OPT_FSYNC, OPT_FORMAT, OPT_KEEP_OWNER, OPT_MAX_EXPANDED_SIZE, OPT_MAX_EXPANSION_RATIO,
	OPT_BEST, OPT_SERVER, OPT_URL_PREFIX, OPT_IMMUTABLE, OPT_NO_CACHE_CONTROL, OPT_PREVIOUS,
	OPT_SHARD, OPT_MUTABLE, OPT_FINGERPRINTS, OPT_ARTIFACTS, OPT_REREAD, OPT_NGINX_BROTLI_STATIC,
	/* then three per coding: --WORD, --no-WORD, --WORD-LEVEL_WORD */
	OPT_CODING_BASE,
};

static const struct option fixed_options[] = {
	{ "best", no_argument, NULL, OPT_BEST },
	{ "shard", required_argument, NULL, OPT_SHARD },
	{ "min-size", required_argument, NULL, OPT_MIN_SIZE },
	{ "max-ratio", required_argument, NULL, OPT_MAX_RATIO },
	{ "include", required_argument, NULL, OPT_INCLUDE },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "follow-symlinks", no_argument, NULL, OPT_FOLLOW },
	{ "jobs", required_argument, NULL, 'j' },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "reread", no_argument, NULL, OPT_REREAD },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ "manifest", required_argument, NULL, OPT_MANIFEST },
	{ "no-manifest", no_argument, NULL, OPT_NO_MANIFEST },
	{ "nginx-conf", required_argument, NULL, OPT_NGINX_CONF },
	{ "artifacts", required_argument, NULL, OPT_ARTIFACTS },
	{ "caddy-conf", required_argument, NULL, OPT_CADDY_CONF },
	{ "apache-conf", required_argument, NULL, OPT_APACHE_CONF },
	{ "no-nginx-conf", no_argument, NULL, OPT_NO_NGINX_CONF },
	{ "nginx-brotli-static", no_argument, NULL, OPT_NGINX_BROTLI_STATIC },
	{ "server", required_argument, NULL, OPT_SERVER },
	{ "url-prefix", required_argument, NULL, OPT_URL_PREFIX },
	{ "immutable", required_argument, NULL, OPT_IMMUTABLE },
	{ "mutable", required_argument, NULL, OPT_MUTABLE },
	{ "fingerprints", required_argument, NULL, OPT_FINGERPRINTS },
	{ "no-cache-control", no_argument, NULL, OPT_NO_CACHE_CONTROL },
	{ "previous", required_argument, NULL, OPT_PREVIOUS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "force", no_argument, NULL, 'f' },
	{ "no-wait", no_argument, NULL, OPT_NO_WAIT },
	{ "cache", required_argument, NULL, OPT_CACHE },
	{ "cache-max-size", required_argument, NULL, OPT_CACHE_MAX_SIZE },
	{ "max-file-size", required_argument, NULL, OPT_MAX_FILE_SIZE },
	{ "stream-size", required_argument, NULL, OPT_STREAM_SIZE },
	{ "fsync", no_argument, NULL, OPT_FSYNC },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "keep-owner", no_argument, NULL, OPT_KEEP_OWNER },
	{ "max-expanded-size", required_argument, NULL, OPT_MAX_EXPANDED_SIZE },
	{ "max-expansion-ratio", required_argument, NULL, OPT_MAX_EXPANSION_RATIO },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
};

static int coding_option(struct cli *cli, int code, const char *arg);


static char *join(const char *a, const char *b, const char *c)
{
	char *s = malloc(strlen(a) + strlen(b) + strlen(c) + 1);

	if (s)
		sprintf(s, "%s%s%s", a, b, c);
	return s;
}

/* The fixed options plus those of each coding of the library's table, and
 * the terminating entry; the names are malloc'ed into NAMES. */
static struct option *build_options(char **names)
{
	size_t nfixed = sizeof(fixed_options) / sizeof(fixed_options[0]), k = nfixed;
	unsigned n = kiln_coding_count();
	struct option *o = calloc(nfixed + PER_CODING * n + 1, sizeof(*o));

	if (!o)
		return NULL;
	memcpy(o, fixed_options, sizeof(fixed_options));
	for (unsigned c = 0; c < n; c++) {
		const struct kiln_coding_info *i = kiln_coding_info((kiln_coding)c);
		char **nm = names + PER_CODING * c;
		int m = i->extra_word ? 6 : 3;
		nm[0] = join("", i->word, "");
		nm[1] = join("no-", i->word, "");
		nm[2] = join(i->word, "-", i->level_word);
		if (i->extra_word) {
			nm[3] = join("", i->extra_word, "");
			nm[4] = join("no-", i->extra_word, "");
			nm[5] = join(i->extra_word, "-", i->extra_param);
		}
		for (int j = 0; j < m; j++) {
			if (!nm[j]) {
				free(o);
				return NULL;
			}
			o[k++] = (struct option){ nm[j], j % 3 == 2 ? required_argument : no_argument,
						  NULL, OPT_CODING_BASE + PER_CODING * (int)c + j };
		}
	}
	return o;
}


static int server_index(const char *name)
{
	for (unsigned i = 0; kiln_server_name(i); i++)
		if (strcmp(kiln_server_name(i), name) == 0)
			return (int)i;
	return 0;
}

/* --server LIST: comma-separated server names, replacing the default.
 * Returns -1 to go on, or an exit status. */
static int parse_servers(struct cli *cli, const char *list)
{
	unsigned set = 0;
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ",");
		unsigned i;
		for (i = 0; kiln_server_name(i); i++)
			if (strlen(kiln_server_name(i)) == n && strncmp(kiln_server_name(i), p, n) == 0)
				break;
		if (!kiln_server_name(i)) {
			char names[128] = "";
			for (unsigned j = 0; kiln_server_name(j); j++)
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
					 j ? ", " : "", kiln_server_name(j));
			return usage_error("--server takes a comma-separated list of %s, not '%s'", names,
					   list);
		}
		set |= 1u << i;
		p += n;
		if (*p == ',')
			p++;
	}
	if (!set)
		return usage_error("--server takes a comma-separated list of servers, not '%s'", list);
	cli->opt.servers = set;
	return -1;
}

/* A coding option (CODE from build_options()) with ARG. */
static int coding_option(struct cli *cli, int code, const char *arg)
{
	kiln_coding c = (code - OPT_CODING_BASE) / PER_CODING;
	const struct kiln_coding_info *i = kiln_coding_info(c);
	uint64_t v;

	switch ((code - OPT_CODING_BASE) % PER_CODING) {
	case 0: cli->opt.codings |= 1u << c; break;
	case 1: cli->opt.codings &= ~(1u << c); break;
	case 2:
		if (!parse_u64(arg, (uint64_t)i->level_min, (uint64_t)i->level_max, &v))
			return usage_error("--%s-%s takes a %s from %d to %d, not '%s'", i->word,
					   i->level_word, i->level_word, i->level_min, i->level_max,
					   arg);
		cli->opt.level[c] = (int)v;
		break;
	case 3: cli->opt.extra[c] = i->extra_default; break;
	case 4: cli->opt.extra[c] = 0; break;
	default:
		if (!parse_u64(arg, (uint64_t)i->extra_min, (uint64_t)i->extra_max, &v))
			return usage_error("--%s-%s takes a number from %d to %d, not '%s'",
					   i->extra_word, i->extra_param, i->extra_min, i->extra_max,
					   arg);
		cli->opt.extra[c] = (int)v;
	}
	return -1;
}

/* --best: every coding, each at its best settings. */
static void best(struct kiln_options *opt)
{
	for (kiln_coding c = 0; c < (kiln_coding)kiln_coding_count(); c++) {
		const struct kiln_coding_info *i = kiln_coding_info(c);
		opt->codings |= 1u << c;
		opt->level[c] = i->level_best;
		if (i->extra_word)
			opt->extra[c] = i->extra_best;
	}
}

/* Returns -1 to go on, or an exit status. */
int parse_args(int argc, char **argv, struct cli *cli)
{
	uint64_t v;
	char *end;
	const char *field;
	struct kiln_options check;
	int c;

	kiln_options_init(&cli->opt);
	kiln_archive_options_init(&cli->aopt);
	cli->verbosity = UI_NORMAL;
	cli->progress = -1;
	cli->include = calloc((size_t)argc, sizeof(char *));
	cli->exclude = calloc((size_t)argc, sizeof(char *));
	cli->immutable = calloc((size_t)argc, sizeof(char *));
	cli->previous = calloc((size_t)argc, sizeof(char *));
	cli->mutable_globs = calloc((size_t)argc, sizeof(char *));
	cli->fingerprints = calloc((size_t)argc, sizeof(char *));
	cli->long_options = build_options(cli->option_names);
	if (!cli->include || !cli->exclude || !cli->immutable || !cli->previous ||
	    !cli->mutable_globs || !cli->fingerprints ||
	    !cli->long_options) {
		fputs("kiln: out of memory\n", stderr);
		return EXIT_FAILED;
	}
	cli->opt.cache_dir = getenv("KILN_CACHE_DIR");
	if (cli->opt.cache_dir && !*cli->opt.cache_dir)
		cli->opt.cache_dir = NULL;
	while ((c = getopt_long(argc, argv, "j:fnqvhVo:", cli->long_options, NULL)) != -1) {
		switch (c) {
		case OPT_MIN_SIZE:
			if (!parse_size(optarg, &cli->opt.min_size))
				return usage_error("--min-size takes a size in bytes (K, M, G suffixes), not '%s'", optarg);
			break;
		case OPT_MAX_RATIO:
			errno = 0;
			cli->opt.max_ratio = strtod(optarg, &end);
			if (optarg[strspn(optarg, "0123456789.")] != '\0' || errno || end == optarg ||
			    *end || !(cli->opt.max_ratio > 0.0) ||
			    cli->opt.max_ratio > 1.0)
				return usage_error("--max-ratio takes a ratio above 0 and at most 1, not '%s'", optarg);
			break;
		case OPT_INCLUDE:
		case OPT_EXCLUDE:
			if (!*optarg)
				return usage_error("--%s takes a non-empty glob", c == OPT_INCLUDE ? "include" : "exclude");
			if (c == OPT_INCLUDE)
				cli->include[cli->opt.n_include++] = optarg;
			else
				cli->exclude[cli->opt.n_exclude++] = optarg;
			break;
		case OPT_FOLLOW: cli->opt.follow_symlinks = true; break;
		case OPT_BEST: best(&cli->opt); break;
		case OPT_SHARD: {
			char msg[512];
			const char *bad = shard_arg_parse(optarg, &cli->opt.shard_index,
							  &cli->opt.shard_count, msg, sizeof(msg));
			if (bad)
				return usage_error("%s", bad);
			break;
		}
		case 'j':
			if (!parse_u64(optarg, 1, 4096, &v))
				return usage_error("--jobs takes a number of threads from 1 to 4096, not '%s'", optarg);
			cli->opt.jobs = (unsigned)v;
			break;
		case OPT_VERIFY: cli->opt.verify = true; break;
		case OPT_REREAD: cli->opt.reread = true; break;
		case 'n': cli->opt.dry_run = true; break;
		case OPT_MANIFEST:
			if (!*optarg)
				return usage_error("--manifest takes a file path");
			cli->opt.manifest_path = optarg;
			cli->opt.write_manifest = true;
			check = cli->opt;
			check.n_previous = 0;
			if (kiln_options_check(&check, &field, NULL) != KILN_OK &&
			    strcmp(field, "manifest_path") == 0)
				return usage_error("--manifest cannot be named like a shard part, not '%s'", optarg);
			break;
		case OPT_NO_MANIFEST: cli->opt.write_manifest = false; break;
		case OPT_ARTIFACTS:
			if (!*optarg)
				return usage_error("--artifacts takes a directory");
			cli->opt.artifacts_dir = optarg;
			break;
		case OPT_NGINX_CONF:
		case OPT_CADDY_CONF:
		case OPT_APACHE_CONF: {
			const char *sv = c == OPT_NGINX_CONF ? "nginx" : c == OPT_CADDY_CONF ? "caddy" : "apache";
			if (!*optarg)
				return usage_error("--%s-conf takes a file path", sv);
			*(c == OPT_NGINX_CONF	? &cli->opt.nginx_conf_path
			  : c == OPT_CADDY_CONF ? &cli->opt.caddy_conf_path
						: &cli->opt.apache_conf_path) = optarg;
			cli->opt.servers |= 1u << server_index(sv);
			break;
		}
		case OPT_NO_NGINX_CONF: cli->opt.servers &= ~(1u << server_index("nginx")); break;
		case OPT_NGINX_BROTLI_STATIC: cli->opt.nginx_static_modules = true; break;
		case OPT_SERVER: {
			int st = parse_servers(cli, optarg);
			if (st >= 0)
				return st;
			break;
		}
		case OPT_URL_PREFIX:
			cli->opt.url_prefix = optarg;
			/* the option lists are filled in after the loop */
			check = cli->opt;
			check.n_previous = 0;
			if (kiln_options_check(&check, &field, NULL) != KILN_OK &&
			    strcmp(field, "url_prefix") == 0)
				return usage_error("--url-prefix takes a URL path that begins and ends with '/' "
						   "and holds no spaces, quotes, '%%', '?', '#' or the like, not '%s'",
						   optarg);
			break;
		case OPT_IMMUTABLE:
			if (!*optarg)
				return usage_error("--immutable takes a non-empty glob");
			cli->immutable[cli->opt.n_immutable++] = optarg;
			break;
		case OPT_MUTABLE:
			if (!*optarg)
				return usage_error("--mutable takes a non-empty glob");
			cli->mutable_globs[cli->opt.n_mutable++] = optarg;
			break;
		case OPT_FINGERPRINTS:
			if (!*optarg)
				return usage_error("--fingerprints takes a bundler manifest's path");
			cli->fingerprints[cli->opt.n_fingerprints++] = optarg;
			break;
		case OPT_NO_CACHE_CONTROL: cli->opt.cache_control = false; break;
		case OPT_PREVIOUS:
			if (!*optarg)
				return usage_error("--previous takes an earlier release's directory");
			if (cli->opt.n_previous == KILN_MAX_PREVIOUS)
				return usage_error("--previous is given more than %d times", KILN_MAX_PREVIOUS);
			cli->previous[cli->opt.n_previous++] = optarg;
			break;
		case OPT_JSON: cli->json = true; break;
		case 'f': cli->opt.force = true; break;
		case OPT_NO_WAIT: cli->opt.no_wait = true; break;
		case OPT_CACHE:
			if (!*optarg)
				return usage_error("--cache takes a directory");
			cli->opt.cache_dir = optarg;
			break;
		case OPT_MAX_FILE_SIZE:
			if (!parse_size(optarg, &cli->opt.max_file_size))
				return usage_error("--max-file-size takes a size in bytes (K, M, G suffixes), not '%s'", optarg);
			break;
		case OPT_STREAM_SIZE:
			if (!parse_size(optarg, &cli->opt.stream_size))
				return usage_error("--stream-size takes a size in bytes (K, M, G suffixes), not '%s'", optarg);
			break;
		case OPT_FSYNC: cli->opt.fsync = true; break;
		case 'o':
			if (!*optarg)
				return usage_error("-o takes an output archive name");
			cli->output = optarg;
			break;
		case OPT_FORMAT:
			cli->aopt.format = KILN_ARCHIVE_AUTO;
			for (int f = KILN_ARCHIVE_TAR; f <= KILN_ARCHIVE_ZIP; f++)
				if (strcmp(optarg, kiln_archive_format_name((kiln_archive_format)f)) == 0)
					cli->aopt.format = (kiln_archive_format)f;
			if (cli->aopt.format == KILN_ARCHIVE_AUTO)
				return usage_error("--format takes tar, tar.gz, tar.zst, tar.xz or zip, not '%s'", optarg);
			cli->archive_option = true;
			break;
		case OPT_KEEP_OWNER:
			cli->aopt.keep_owner = true;
			cli->archive_option = true;
			break;
		case OPT_MAX_EXPANDED_SIZE:
			if (!parse_size(optarg, &cli->aopt.max_expanded_size))
				return usage_error("--max-expanded-size takes a size in bytes (K, M, G suffixes), not '%s'", optarg);
			cli->archive_option = true;
			break;
		case OPT_MAX_EXPANSION_RATIO:
			errno = 0;
			cli->aopt.max_expansion_ratio = strtod(optarg, &end);
			if (optarg[strspn(optarg, "0123456789.")] != '\0' || errno || end == optarg || *end)
				return usage_error("--max-expansion-ratio takes a ratio (0: no limit), not '%s'", optarg);
			cli->archive_option = true;
			break;
		case OPT_CACHE_MAX_SIZE:
			if (!parse_size(optarg, &cli->opt.cache_max_size))
				return usage_error("--cache-max-size takes a size in bytes (K, M, G suffixes), not '%s'", optarg);
			break;
		case OPT_PROGRESS: cli->progress = 1; break;
		case OPT_NO_PROGRESS: cli->progress = 0; break;
		case 'q': cli->verbosity = UI_QUIET; break;
		case 'v': cli->verbosity = UI_VERBOSE; break;
		case 'h': usage(stdout); return EXIT_OK;
		case 'V': {
			const char *name, *version;
			printf("kiln %s\n", kiln_version());
			for (size_t i = 0; kiln_library(i, &name, &version); i++)
				printf("%s %s\n", name, version);
			return EXIT_OK;
		}
		default:
			if (c >= OPT_CODING_BASE) {
				int st = coding_option(cli, c, optarg);
				if (st >= 0)
					return st;
				break;
			}
			fputs("Try 'kiln --help' for more information.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (cli->opt.n_previous && cli->opt.shard_count)
		return usage_error("--previous and --shard cannot be used together yet: a shard "
				   "writes no dictionary deltas");
	cli->opt.include = cli->include;
	cli->opt.exclude = cli->exclude;
	cli->opt.immutable = cli->immutable;
	cli->opt.previous = cli->previous;
	cli->opt.mutable_globs = cli->mutable_globs;
	cli->opt.fingerprints = cli->fingerprints;
	if (cli->opt.codings == 0)
		return usage_error("every coding is turned off: nothing to write");
	return -1;
}

/* The checks that apply once the operands are known, with -o.  Returns -1
 * to go on, or an exit status. */
int check_archive_args(struct cli *cli, enum command cmd, int noperands)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	uint64_t v;

	if (!cli->output)
		return cli->archive_option ? usage_error("--format, --keep-owner and --max-expan* need -o OUT")
					   : -1;
	if (cmd != CMD_COMPRESS)
		return usage_error("-o works with compress only");
	if (cli->opt.shard_count)
		return usage_error("--shard works on directories, not with -o");
	if (noperands != 1)
		return usage_error("-o OUT takes exactly one ARCHIVE or DIR");
	if (cli->opt.manifest_path || names_outputs(&cli->opt))
		return usage_error("--manifest and --nginx-conf, --caddy-conf, --apache-conf cannot be used with -o: the artifacts go into OUT");
	if (cli->aopt.format == KILN_ARCHIVE_AUTO &&
	    (cli->aopt.format = kiln_archive_format_from_name(cli->output)) == KILN_ARCHIVE_AUTO)
		return usage_error("cannot tell the format of '%s' from its name (.tar, .tar.gz, .tgz, .tar.zst, .tar.xz, .zip): use --format",
				   cli->output);
	/* reproducible builds: the time of what has no source of its own */
	if (sde && *sde) {
		if (!parse_u64(sde, 0, (uint64_t)INT64_MAX, &v))
			return usage_error("SOURCE_DATE_EPOCH must be a number of seconds, not '%s'", sde);
		cli->aopt.mtime_set = true;
		cli->aopt.mtime = (int64_t)v;
	}
	return -1;
}

void cli_free(struct cli *cli)
{
	free(cli->include);
	free(cli->exclude);
	free(cli->immutable);
	free(cli->previous);
	free(cli->mutable_globs);
	free(cli->fingerprints);
	free(cli->long_options);
	for (size_t i = 0; i < sizeof(cli->option_names) / sizeof(cli->option_names[0]); i++)
		free(cli->option_names[i]);
}
