/*
 * no_xar.c - the static kiln has no xar support.
 *
 * libarchive's xar reader and writer need libxml2, and a static libxml2
 * needs ICU: about 40 MB for one rarely seen input format.  The static link
 * (packaging/static.cmake) passes --wrap for the two xar entry points, so
 * calls to them land here and libarchive's xar objects are never linked.
 * The reader answers as libarchive itself does when built without libxml2:
 * a warning, and xar input is then simply not recognised.
 */
#include <archive.h>

#include <errno.h>

int __wrap_archive_read_support_format_xar(struct archive *a);
int __wrap_archive_write_set_format_xar(struct archive *a);

int __wrap_archive_read_support_format_xar(struct archive *a)
{
	archive_set_error(a, ENOTSUP, "xar is not supported by the static kiln");
	return ARCHIVE_WARN;
}

int __wrap_archive_write_set_format_xar(struct archive *a)
{
	archive_set_error(a, ENOTSUP, "xar is not supported by the static kiln");
	return ARCHIVE_FATAL;
}
