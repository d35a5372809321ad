/*
 * sibling.h - what a sibling looks like on disk.
 *
 * A sibling NAME.SUFFIX sits in its source's directory and carries its
 * source's permission bits (mode & 0777), exact atime and mtime
 * (nanoseconds) and, when kiln runs as root, its owner: a server then gives
 * every coding of one file the same Last-Modified, and serves a sibling
 * exactly as readable as its source.  It is put in place through
 * tempfile.h, so it is never seen half-written.
 */
#ifndef KILN_SIBLING_H
#define KILN_SIBLING_H

#include "paths.h"

#include "kiln.h"
#include "tempfile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* The metadata a sibling of SRC gets; TIMES (2 entries) is filled and
 * pointed to by the result.  A read-only file at the sibling's name beside
 * a writable source is refused (made read-only on purpose) unless the
 * caller knows it for kiln's own and clears refuse_read_only: kiln gives a
 * sibling its source's mode, so the sibling of a source that was read-only
 * when it was written is read-only too, and kiln's own siblings must hold
 * the current source whatever their mode. */
struct kiln_file_meta kiln_sibling_meta(const struct stat *src, bool fsync,
					struct timespec times[2]);

/* The refusals a sibling of SRC at FINAL_PATH would meet
 * (kiln_final_check()), checked before anything is written, so that every
 * sibling of a file can be checked before the first is written, and a dry
 * run finds what would stop the real one.  OWN: the file there now is one
 * kiln wrote (its record, a journal or a part proves it by its digest),
 * which is replaced even when read-only. */
kiln_status kiln_sibling_check(const char *final_path, const struct stat *src, bool own,
			       struct kiln_error *err);

/*
 * Write DATA[0..len) as the sibling FINAL_PATH of SRC, atomically, with the
 * metadata above (OWN as for kiln_sibling_check()).  On failure FINAL_PATH
 * is left as it was and *err says what failed.
 */
kiln_status kiln_sibling_write(struct kiln_temps *reg, const char *final_path,
			       const uint8_t *data, size_t len, const struct stat *src,
			       bool own, bool fsync, struct kiln_error *err);

/* Does REL's last component followed by SUFFIX fit in NAME_MAX bytes, the
 * longest name a directory entry can have? */
bool kiln_sibling_name_fits(const char *rel, const char *suffix);


/* Remove the sibling (or dictionary delta) PATH, beneath ROOT (no link
 * followed on the way): 0, or -1 with errno (ENOENT when it is not there,
 * or is behind a link, outside the tree).  The caller has made sure the
 * file is kiln's to remove (its digest on record, or its name kiln's).
 * The one place a sibling is removed. */
int kiln_sibling_remove(const char *root, const char *path);

/* Does the sibling PATH (beneath ROOT, no link followed; a regular file)
 * decode with coding C to the SRC_SIZE bytes of the source open as
 * SRC_FD?  Both are read in chunks (pread: SRC_FD's offset is not moved),
 * so memory does not grow with their size.  1 yes, 0 no, -1 unknown (no
 * source, SIB not a regular file or unreadable).  Any thread. */
int kiln_sibling_decodes(const char *root, const char *path, kiln_coding c, int src_fd,
			 uint64_t src_size);

/* Give the sibling PATH (beneath ROOT, no link followed) its source SRC's
 * mode and mtime; false when it cannot be opened or changed (fchmod or
 * futimens failed, errno set), or is hard-linked elsewhere and would need
 * a change (the other name's metadata is not kiln's): the caller writes it
 * anew, or reports it. */
bool kiln_sibling_fix_meta(const char *root, const char *path, const struct stat *src);

/* The same for the sibling open as FD, whose status is *ST: true when it
 * has (or, with DRY_RUN, could be given without a change elsewhere) SRC's
 * mode and mtime; false when it is hard-linked elsewhere and would need a
 * change, or fchmod or futimens failed.  The one place a sibling's
 * metadata is changed in place. */
bool kiln_sibling_fix_meta_fd(int fd, const struct stat *st, const struct stat *src,
			      bool dry_run);

#endif
