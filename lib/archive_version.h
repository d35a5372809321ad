/*
 * archive_version.h - what the archive modules (archive*.c, behind
 * kiln_run_archive()) offer the rest of libkiln.
 */
#ifndef KILN_ARCHIVE_VERSION_H
#define KILN_ARCHIVE_VERSION_H

/* The version of the libarchive kiln runs with, e.g. "3.6.2".  Static. */
const char *kiln_archive_library_version(void);

#endif
