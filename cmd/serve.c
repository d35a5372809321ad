/*
 * serve.c - `kiln serve [OPTIONS] DIR`: serve a tree from its manifest.
 *
 * The server is libkiln's (kiln_httpd_*); this file reads the options,
 * prints the one line that says where and what, and waits: SIGHUP, or a
 * new manifest noticed by the poll (every --poll seconds), loads the
 * manifest again; SIGTERM or SIGINT stops accepting, lets open responses
 * finish (up to five seconds) and exits 0.  Signals are blocked before the
 * server's threads exist and taken here with sigtimedwait(2), so no
 * handler runs on a server thread.
 */
#include "kiln.h"

#include "args.h"
#include "command.h"
#include "ui.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int serve_usage(const char *msg)
{
	if (msg)
		fprintf(stderr, "kiln: %s\n", msg);
	fputs("usage: kiln serve [--listen ADDR:PORT] [--threads N] [--max-connections N]\n"
	      "                  [--max-connections-per-ip N] [--timeout SECONDS]\n"
	      "                  [--poll SECONDS] [--access-log FILE]\n"
	      "                  [--manifest PATH | --artifacts OUTDIR] [--url-prefix PATH]\n"
	      "                  [--verify] [--no-cache-control] [-q] DIR\n",
	      msg ? stderr : stdout);
	return msg ? EXIT_USAGE : EXIT_OK;
}

/* "ADDR:PORT", "[V6]:PORT" or ":PORT" into ADDR (at most CAP bytes) and
 * *PORT; false if malformed. */
static bool parse_listen(const char *s, char *addr, size_t cap, unsigned *port)
{
	const char *colon = strrchr(s, ':');
	const char *a = s, *aend = colon;
	char *end;
	long p;

	if (!colon)
		return false;
	if (s[0] == '[') {
		a = s + 1;
		if (colon == s || colon[-1] != ']')
			return false;
		aend = colon - 1;
	}
	if ((size_t)(aend - a) + 1 > cap)
		return false;
	if (aend == a) {
		snprintf(addr, cap, "127.0.0.1");
	} else {
		memcpy(addr, a, (size_t)(aend - a));
		addr[aend - a] = '\0';
	}
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || p < 0 || p > 65535)
		return false;
	*port = (unsigned)p;
	return true;
}

static void say_error(const char *dir, const struct kiln_error *err)
{
	fputs("kiln: ", stderr);
	ui_put_escaped(stderr, dir);
	fprintf(stderr, ": %s", err->what);
	if (err->errnum)
		fprintf(stderr, ": %s", strerror(err->errnum));
	fputc('\n', stderr);
}

static void say_serving(const char *dir, const char *addr, const char *prefix,
			struct kiln_httpd *h, bool again, unsigned asked_connections)
{
	struct kiln_httpd_info in;
	bool v6 = strchr(addr, ':') != NULL, first = true;

	kiln_httpd_info(h, &in);
	fputs("kiln: ", stderr);
	fputs(again ? "reloaded " : "serving ", stderr);
	ui_put_escaped(stderr, dir);
	fprintf(stderr, " at http://%s%s%s:%u%s (%zu assets", v6 ? "[" : "", addr, v6 ? "]" : "",
		in.port, prefix, in.assets);
	for (unsigned c = 0; c < kiln_coding_count(); c++)
		if (in.codings & (1u << c)) {
			fprintf(stderr, "%s%s", first ? ", " : "/", kiln_coding_info((kiln_coding)c)->name);
			first = false;
		}
	if (in.deltas)
		fprintf(stderr, ", %zu delta%s", in.deltas, in.deltas == 1 ? "" : "s");
	if (in.missing)
		fprintf(stderr, "; %zu recorded file%s not on disk as recorded, not served",
			in.missing, in.missing == 1 ? "" : "s");
	if (in.max_connections < asked_connections)
		fprintf(stderr, "; %u connections at most, for the descriptor limit", in.max_connections);
	if (in.changed)
		fprintf(stderr, "; %zu source%s changed since the manifest, sent as they are",
			in.changed, in.changed == 1 ? "" : "s");
	fputs(")\n", stderr);
}

/* The server keeps files it has sent open (and their responses built), up
 * to a quarter of its descriptors, and needs two per connection: as many
 * as the system lets it have. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int serve_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "threads", required_argument, NULL, 't' },
		{ "poll", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "max-connections", required_argument, NULL, 'm' },
		{ "max-connections-per-ip", required_argument, NULL, 'P' },
		{ "no-cache-control", no_argument, NULL, 'C' },
		{ "url-prefix", required_argument, NULL, 'u' },
		{ "verify", no_argument, NULL, 'v' },
		{ "manifest", required_argument, NULL, 'M' },
		{ "artifacts", required_argument, NULL, 'A' },
		{ "access-log", required_argument, NULL, 'a' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	struct kiln_httpd_options o = { .address = "127.0.0.1", .port = 8080,
					.threads = cores < 1 ? 1 : cores > 16 ? 16 : (unsigned)cores,
					.cache_control = true, .access_log_fd = -1,
					.max_per_ip = 128 };
	struct kiln_httpd *h = NULL;
	struct kiln_error err = { 0 };
	char addr[64] = "127.0.0.1";
	const char *manifest = NULL, *artifacts = NULL;
	char *artifacts_manifest = NULL;
	long poll_s = 1, n;
	bool quiet = false, failing = false;
	sigset_t set;
	kiln_status st;
	int ch;
	char *end;

	argv[0] = (char *)"kiln serve"; /* getopt's own messages */
	optind = 1;
	while ((ch = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			if (!parse_listen(optarg, addr, sizeof(addr), &o.port))
				return serve_usage("--listen: want ADDR:PORT (127.0.0.1:8080, [::1]:8080)");
			break;
		case 't':
			n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > 256)
				return serve_usage("--threads: want 1 to 256");
			o.threads = (unsigned)n;
			break;
		case 'T':
			n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > 3600)
				return serve_usage("--timeout: want 1 to 3600 seconds");
			o.timeout = (unsigned)n;
			break;
		case 'm':
			n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > 65536)
				return serve_usage("--max-connections: want 1 to 65536");
			o.max_connections = (unsigned)n;
			break;
		case 'P':
			n = strtol(optarg, &end, 10);
			if (*end || n < 0 || n > 65536)
				return serve_usage("--max-connections-per-ip: want 0 (no limit) to 65536");
			o.max_per_ip = (unsigned)n;
			break;
		case 'p':
			poll_s = strtol(optarg, &end, 10);
			if (*end || poll_s < 0 || poll_s > 86400)
				return serve_usage("--poll: want 0 (off) to 86400 seconds");
			break;
		case 'C':
			o.cache_control = false;
			break;
		case 'v':
			o.verify = true;
			break;
		case 'M':
			if (!*optarg)
				return serve_usage("--manifest takes the manifest's path");
			manifest = optarg;
			break;
		case 'A':
			if (!*optarg)
				return serve_usage("--artifacts takes the directory kiln wrote its files into");
			artifacts = optarg;
			break;
		case 'u':
			if (optarg[0] != '/' || optarg[strlen(optarg) - 1] != '/')
				return serve_usage("--url-prefix: a URL path that begins and ends with '/'");
			o.url_prefix = optarg;
			break;
		case 'a':
			if (o.access_log_fd >= 0 && o.access_log_fd != STDOUT_FILENO)
				close(o.access_log_fd);
			o.access_log_fd = strcmp(optarg, "-") == 0
						  ? STDOUT_FILENO
						  : open(optarg, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
			if (o.access_log_fd < 0) {
				fputs("kiln: ", stderr);
				ui_put_escaped(stderr, optarg);
				fprintf(stderr, ": cannot open the access log: %s\n", strerror(errno));
				return EXIT_FAILED;
			}
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			return serve_usage(NULL);
		default:
			return serve_usage("unknown option (kiln serve --help)");
		}
	}
	if (argc - optind != 1)
		return serve_usage(argc - optind ? "serve takes one DIR" : "no DIR given");
	o.address = addr;
	/* as for the other commands: --manifest wins over --artifacts */
	if (!manifest && artifacts) {
		size_t len = strlen(artifacts) + sizeof("/" KILN_MANIFEST_NAME);
		if (!(artifacts_manifest = malloc(len))) {
			fputs("kiln: out of memory\n", stderr);
			return EXIT_FAILED;
		}
		snprintf(artifacts_manifest, len, "%s/%s", artifacts, KILN_MANIFEST_NAME);
		manifest = artifacts_manifest;
	}
	o.manifest_path = manifest;
	raise_fd_limit();
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* before the server's threads */
	if ((st = kiln_httpd_start(argv[optind], &o, &h, &err)) != KILN_OK) {
		if (st == KILN_ERR_NOMEM)
			fputs("kiln: out of memory\n", stderr);
		else
			say_error(argv[optind], &err);
		free(artifacts_manifest);
		return EXIT_FAILED;
	}
	if (!quiet)
		say_serving(argv[optind], addr, o.url_prefix ? o.url_prefix : "/", h, false,
			    o.max_connections ? o.max_connections : 1024);
	for (;;) {
		struct timespec ts = { poll_s ? poll_s : 3600, 0 };
		int sig = sigtimedwait(&set, NULL, &ts);
		bool reloaded = false;

		if (sig == SIGINT || sig == SIGTERM)
			break;
		if (sig == SIGPIPE || (sig < 0 && (errno != EAGAIN || !poll_s)))
			continue;
		/* SIGHUP: load again; the poll: load again if it changed */
		st = kiln_httpd_reload(h, sig != SIGHUP, &reloaded, &err);
		if (st != KILN_OK && !failing) { /* told once until a load works */
			if (st == KILN_ERR_NOMEM)
				fputs("kiln: out of memory\n", stderr);
			else
				say_error(argv[optind], &err);
			fputs("kiln: the last manifest loaded goes on serving\n", stderr);
		} else if (reloaded && !quiet) {
			say_serving(argv[optind], addr, o.url_prefix ? o.url_prefix : "/", h, true,
				    o.max_connections ? o.max_connections : 1024);
		}
		failing = st != KILN_OK;
	}
	kiln_httpd_stop(h, 5000);
	free(artifacts_manifest);
	return EXIT_OK;
}
