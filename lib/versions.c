/*
 * versions.c - the libraries kiln runs with: the codec table's encoder
 * libraries, then libarchive, then in the WebAssembly build the runtime
 * (host.h).  Only the program asks (kiln --version).
 */
#include "archive_version.h"
#include "codec.h"
#include "host.h"
#include "kiln.h"

bool kiln_library(size_t i, const char **name, const char **version)
{
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		for (const struct kiln_codec_library *l = kiln_codecs[c]->libraries; l->name; l++)
			if (i-- == 0) {
				*name = l->name;
				*version = l->version();
				return true;
			}
	if (i-- == 0) {
		*name = "libarchive";
		*version = kiln_archive_library_version();
		return true;
	}
	return i == 0 && kiln_host_runtime(name, version);
}
