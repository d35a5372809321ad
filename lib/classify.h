/*
 * classify.h - deciding what a file is, from its name and its first bytes.
 *
 * Pure functions over strings and byte buffers: no I/O, no state, safe from
 * any thread.  The order in which walk.c and pipeline.c apply them is the
 * order of the outcome rules: sibling, excluded, media, small.  Sibling
 * names themselves are the codec table's (codec.h).
 */
#ifndef KILN_CLASSIFY_H
#define KILN_CLASSIFY_H

#include "paths.h"

#include <stdbool.h>
#include <stddef.h>

/* Bytes of a file's start that kiln_media_magic() looks at. */
#define KILN_MAGIC_BYTES 16

/* True for the names kiln itself writes in a tree: the manifest, the nginx
 * snippet, shard parts, run journals and temporary files, at any depth. */
bool kiln_is_own_output(const char *name);

/* Is NAME a part's file name: "kiln-manifest.shard-K-of-N.json" (a part
 * of a manifest named kiln-manifest.json) or
 * "kiln-manifest.shard-K-of-N.STEM.json" (of one named otherwise; see
 * kiln_part_path()), with 1 <= K <= N <= KILN_MAX_SHARDS written without
 * leading zeros and STEM not empty?  Then *K and *N get them, and *STEM
 * points at STEM in NAME (it runs up to NAME's last ".json") or is NULL for
 * the first form; any of them may be NULL. */
bool kiln_is_part_name(const char *name, unsigned *k, unsigned *n, const char **stem);

/* True for a run journal's name: ".kiln-journal-" and 6 characters. */
bool kiln_is_journal_name(const char *name);

/* True for kiln's temporary file names: ".kiln-" 6 characters ".tmp". */
bool kiln_is_temp_name(const char *name);

/* True if NAME's last extension (after the last '.', compared without regard
 * to ASCII case) is one of already-compressed media/archive types. */
bool kiln_media_extension(const char *name);

/* True if the first N bytes of a file (N may be less than KILN_MAGIC_BYTES
 * for short files) carry the signature of an already-compressed format:
 * PNG, JPEG, GIF, WebP/AVI (RIFF), ISO-BMFF (MP4, MOV, HEIC, AVIF, 3GP),
 * JPEG XL, Matroska/WebM, Ogg, FLAC, MP3, AAC (ADTS), FLV, ASF/WMV,
 * MPEG-PS, ZIP (and JAR, APK, EPUB, OOXML, ODF), gzip, bzip2, xz, zstd, 7z,
 * RAR, LZ4, WOFF and WOFF2.  Signatures are the formats' own published
 * magic numbers. */
bool kiln_media_magic(const unsigned char *buf, size_t n);


#endif
