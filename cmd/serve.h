/*
 * serve.h - the `kiln serve` command (serve.c).
 */
#ifndef KILN_CMD_SERVE_H
#define KILN_CMD_SERVE_H

/* Run `kiln serve` with ARGV (ARGV[0] the program, then its options and
 * DIR); returns the exit status: 0 after SIGTERM or SIGINT, 1 when the
 * tree cannot be served, 2 for a usage error. */
int serve_main(int argc, char **argv);

#endif
