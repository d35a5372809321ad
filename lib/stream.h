/*
 * stream.h - compressing a source too large to hold in memory.
 */
#ifndef KILN_STREAM_H
#define KILN_STREAM_H

#include "run.h"

/*
 * Do for the candidate E (open as FD, status ST, at least
 * kiln_options.stream_size bytes) what run.c does for a file it holds in
 * memory: reuse the previous run's siblings (PREV) when the content is
 * unchanged, else encode, decide, verify and write, and fill *R.  The file is
 * read in chunks, once for every coding at the same time, and each encoding
 * goes straight into its sibling's temporary file (in the calling worker's
 * SLOT), so memory is independent of the file's size.  Called from a pool
 * worker; thread-safe as process_file() is.
 */
void kiln_stream_file(struct kiln_run *run, struct kiln_tempslot *slot,
		      const struct kiln_entry *e, const struct kiln_prev_entry *prev, int fd,
		      const struct stat *st, struct kiln_report *r);

#endif
