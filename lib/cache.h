/*
 * cache.h - a content cache of encoded results that outlives the tree.
 *
 * Bundlers recreate dist/ from scratch, so state kept inside the tree is
 * lost on every CI build; a cache directory kept between builds is not.  An
 * entry holds one encoding of one source, keyed by the source's SHA-256, the
 * content-coding and its recipe (encoder, version, level: codec.h), so a
 * hit is byte-for-byte what encoding again would produce.
 *
 * Safe under concurrent kiln processes, on one machine or on many sharing
 * the directory over NFS or the like (kiln --shard runners): no lock is
 * taken, since flock(2) does not reach across machines.  Entries are
 * written with the atomic writer (a temporary file in the entry's
 * directory, then rename(2)), so a reader sees a whole entry or none, and
 * two writers of one key write the same bytes, the last rename winning
 * harmlessly; a reader holds its entry open, so eviction by another process
 * cannot cut it short.  Every entry carries its payload's length and
 * SHA-256 and its own key; a truncated or corrupt entry, or one under
 * another key's name, is a miss and is removed (only while it is still the
 * file read), never used.  A writer's temporary file a day old is a dead
 * writer's, and trimming removes it.
 * Recency is the entry's mtime, refreshed on every hit; kiln_cache_trim()
 * evicts least recently used entries first.
 */
#ifndef KILN_CACHE_H
#define KILN_CACHE_H

#include "kiln.h"
#include "tempfile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kiln_cache;

/* Open (creating if needed) the cache directory DIR, to be kept under
 * MAX_BYTES.  NULL with *err set on failure. */
struct kiln_cache *kiln_cache_open(const char *dir, uint64_t max_bytes, struct kiln_error *err);
void kiln_cache_close(struct kiln_cache *cache);

/* The cache file name for a key: "<sha256 hex>.<coding>.<recipe>" under a
 * two-character fan-out directory; malloc'ed, NULL if out of memory. */
char *kiln_cache_path(const struct kiln_cache *cache, const uint8_t src_sha256[32],
		      const char *coding, const char *recipe);

/*
 * Look up PATH (from kiln_cache_path()).  On a hit, *data (malloc'ed, the
 * caller frees) and *len hold the encoded bytes and the entry's mtime is
 * refreshed; returns true.  A miss, or an entry that fails its own checks
 * (which is then removed), returns false.  Thread-safe.
 */
bool kiln_cache_get(struct kiln_cache *cache, const char *path, uint8_t **data, size_t *len);

/* Store DATA[0..len) under PATH atomically (durably with FSYNC), its
 * temporary file registered in REG.  KILN_OK, or an error with *err set
 * (e.g. ENOSPC).  Thread-safe. */
kiln_status kiln_cache_put(struct kiln_cache *cache, const char *path, const uint8_t *data,
			   size_t len, bool fsync, struct kiln_temps *reg,
			   struct kiln_error *err);

/* Evict least recently used entries until the cache holds at most its
 * maximum.  Returns the number of entries removed. */
size_t kiln_cache_trim(struct kiln_cache *cache);

#endif
