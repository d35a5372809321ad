/*
 * codec.h - the table of content-codings, and the interface each implements.
 *
 * Everything in libkiln that depends on which coding it handles goes
 * through a row of this table: the encoders (whole-buffer and streaming) and
 * their independent decoders, the libraries and their versions, the levels,
 * the sibling suffix, the IANA token the manifest and HTTP use (and any
 * alias HTTP allows), and the recipe that keys reuse and the cache.  The
 * server snippets (snippet_*.c) serve every row alike by its token and
 * suffix.  Adding a content-coding is one new codec_*.c file and one row in
 * kiln_codecs[] (codec.c); no other file of lib/ names a coding.
 */
#ifndef KILN_CODEC_H
#define KILN_CODEC_H

#include "paths.h"

#include "kiln.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Where a streaming encoder puts its output: called with each piece, in
 * order.  Anything but KILN_OK stops the encoder, which returns it. */
typedef kiln_status (*kiln_sink)(void *arg, const uint8_t *p, size_t n);

/* A library a codec uses: its name as the manifest's generator and
 * `kiln --version` print it, and its version (a static string). */
struct kiln_codec_library {
	const char *name;
	const char *(*version)(void);
};

/* Streaming encoders are fed pieces of this many bytes (the last may be
 * shorter), by kiln's streamed path and by whole-buffer encoders that are
 * streaming ones underneath (brotli): some encoders' bytes depend on how
 * their input is cut, so both paths cut it the same way. */
#define KILN_CODEC_PIECE ((size_t)1 << 20)

/* What a whole-buffer encoder is told between pieces of its input: stop
 * once *CANCELLED is set, and report each piece consumed to PROGRESS (when
 * not NULL; called on the encoding thread). */
struct kiln_encode_ctl {
	const atomic_int *cancelled;
	void (*progress)(void *arg, size_t bytes);
	void *arg;
};

/* BYTES more of the input consumed; false when the encode should stop. */
static inline bool kiln_encode_step(const struct kiln_encode_ctl *ctl, size_t bytes)
{
	if (bytes && ctl->progress)
		ctl->progress(ctl->arg, bytes);
	return !atomic_load(ctl->cancelled);
}

/* Longest recipe, with its NUL. */
#define KILN_RECIPE_MAX 64

struct kiln_codec {
	struct kiln_coding_info info;

	/* The libraries it encodes and decodes with, ending with {NULL}. */
	const struct kiln_codec_library *libraries;

	/* Another token HTTP recipients treat as this coding's, or NULL:
	 * "x-gzip" for gzip (RFC 9110 section 8.4.1.3).  The snippets accept
	 * it in Accept-Encoding. */
	const char *http_alias;
	/* The nginx module that sends this coding's sibling by itself, named
	 * by its directive ("gzip_static"), or NULL when nginx has none.  The
	 * modules answer in the reverse of their load order, so the later
	 * coding of the table first (brotli_static before gzip_static).
	 * NGINX_STATIC_OWN: the module is part of nginx's own build; else it
	 * is one loaded apart, which the nginx snippet counts on only when
	 * told (kiln_options.nginx_static_modules). */
	const char *nginx_static;
	bool nginx_static_own;

	/*
	 * The recipe: a short string (no spaces, under KILN_RECIPE_MAX bytes)
	 * naming everything besides the source bytes that decides the encoded
	 * bytes: encoder, its version, level and any other parameter.  Two runs
	 * with the same recipe make the same bytes of the same source, so a
	 * sibling or cache entry is reused only under an equal recipe.
	 * LEVEL and EXTRA are the options' level[] and extra[] for this coding.
	 * STREAMED: the source is at least stream_size bytes (some codings use
	 * another encoder then).
	 */
	void (*recipe)(int level, int extra, bool streamed, char out[KILN_RECIPE_MAX]);

	/*
	 * Per-thread encoder state for LEVEL and EXTRA, reused for every file a
	 * worker encodes (a level-12 libdeflate compressor is expensive to
	 * allocate).  Returns NULL when out of memory.  One state is used by
	 * one thread at a time.
	 */
	void *(*state_new)(int level, int extra);
	void (*state_free)(void *state);

	/* Bytes of output room that encode() needs for IN_LEN bytes of input:
	 * the format's worst case plus whatever slack the encoder wants. */
	size_t (*bound)(size_t in_len);

	/*
	 * Encode IN[0..in_len) into OUT, which has room for CAP bytes (CAP at
	 * least bound(in_len)).  Between pieces of about 1 MiB, where the
	 * encoder allows, it calls kiln_encode_step(CTL, bytes consumed).
	 * Returns KILN_OK with *out_len set; KILN_OK with *out_len == 0 if it
	 * did not fit after all; KILN_ERR_CANCELLED if CTL says so; or
	 * KILN_ERR_NOMEM / KILN_ERR_ENCODER.  The output depends only on the
	 * input and the state's settings, never on CAP or CTL.
	 */
	kiln_status (*encode)(void *state, const uint8_t *in, size_t in_len, uint8_t *out,
			      size_t cap, size_t *out_len, const struct kiln_encode_ctl *ctl);

	/*
	 * Decode ENC[0..enc_len) with an independent decoder and compare it with
	 * SRC[0..src_len).  KILN_OK if it is one complete, valid stream that
	 * decodes to exactly SRC; KILN_ERR_VERIFY otherwise; KILN_ERR_NOMEM.
	 * Thread-safe (no shared state).
	 */
	kiln_status (*verify)(const uint8_t *enc, size_t enc_len, const uint8_t *src,
			      size_t src_len);

	/*
	 * The streaming encoder, for a source too large to hold in memory
	 * (kiln_options.stream_size).  stream_new() makes one at LEVEL (and
	 * EXTRA) for a source of SIZE bytes (NULL: out of memory); stream_write() feeds
	 * IN[0..len), LAST saying the source ends there, and hands all output
	 * produced so far to SINK; it returns KILN_OK, SINK's failure,
	 * KILN_ERR_NOMEM or KILN_ERR_ENCODER, after which the stream can only be
	 * freed.  stream_free() may be called at any point.  Memory is the
	 * encoder's window and tables, independent of SIZE.  Fed in pieces of
	 * KILN_CODEC_PIECE bytes, the output is a function of the bytes, the
	 * size and the level alone, and equals encode()'s exactly when recipe()
	 * does not depend on STREAMED.
	 */
	void *(*stream_new)(int level, int extra, uint64_t size);
	kiln_status (*stream_write)(void *stream, const uint8_t *in, size_t len, bool last,
				    kiln_sink sink, void *sink_arg);
	void (*stream_free)(void *stream);

	/*
	 * verify() for files: decode the ENC_LEN bytes of ENC_FD and compare them
	 * with the SRC_LEN bytes of SRC_FD, both read with pread(2) from offset
	 * 0 in small chunks (memory is independent of the sizes).  Returns as
	 * verify() does, or KILN_ERR_IO if a file cannot be read.  Thread-safe.
	 */
	kiln_status (*verify_fd)(int enc_fd, uint64_t enc_len, int src_fd, uint64_t src_len);
};

/* The number of rows of the table, for arrays sized per coding that are
 * kept per file (records): codec.c checks it against the table. */
#define KILN_NCODECS 3

/* The table, indexed by kiln_coding; kiln_ncodecs rows. */
extern const struct kiln_codec *const kiln_codecs[];
extern const unsigned kiln_ncodecs;

/* The row of coding C (0 <= C < kiln_ncodecs). */
static inline const struct kiln_codec *kiln_codec(kiln_coding c)
{
	return kiln_codecs[c];
}

/* The recipe coding C of OPT gives a source of SIZE bytes. */
void kiln_codec_recipe(const struct kiln_options *opt, kiln_coding c, uint64_t size,
		       char out[KILN_RECIPE_MAX]);

/*
 * Sibling names.  Besides the table's suffixes, the suffixes of codings kiln
 * may write in a later version are reserved, so that a file named like their
 * sibling is never taken for a source today and claimed as an asset.
 * kiln_sibling_base_len(NAME): if NAME ends in a sibling suffix (the table's
 * or a reserved one) and is longer than it, the length of the name without
 * it ("app.js.gz" -> 6); otherwise 0.  kiln_sibling_coding(NAME): the coding
 * whose suffix NAME ends in, or -1 (also for a reserved suffix).
 */
size_t kiln_sibling_base_len(const char *name);
kiln_coding kiln_sibling_coding(const char *name);

/* True if EXT (without its dot, any ASCII case) is a sibling suffix, the
 * table's or a reserved one: such files are compressed streams already. */
bool kiln_is_sibling_extension(const char *ext);

/*
 * Dictionary deltas (RFC 9842).  A coding that needs a dictionary besides
 * the source is not a row of kiln_codecs[] (every row encodes a source
 * alone); kiln_codec_dcz (codec_dcz.c) is the one there is, and dict.c
 * decides which dictionaries a file gets.  Its sibling is named after the
 * dictionary: NAME + "." + KILN_DICT_ID_HEX lowercase hex digits of the
 * dictionary's SHA-256 + suffix ("app.3f9a2c7b.js.0123456789abcdef.dcz"),
 * so one file can have one per dictionary, a server picks it by the
 * request's Available-Dictionary, and no tool takes it for an asset.
 */
#define KILN_DICT_ID_HEX 16

struct kiln_dict_codec {
	const char *name;   /* the HTTP content-coding token */
	const char *suffix; /* the sibling's last suffix, with its dot */
	size_t header_len;  /* bytes before the compressed frame */
	/* The recipe (as kiln_codec.recipe): encoder, version, level. */
	void (*recipe)(char out[KILN_RECIPE_MAX]);
	/*
	 * Encode IN[0..in_len) against the dictionary DICT[0..dict_len), whose
	 * SHA-256 is DICT_SHA, into a malloc'ed *OUT of *OUT_LEN bytes.
	 * KILN_OK, KILN_ERR_NOMEM or KILN_ERR_ENCODER.  Deterministic: a
	 * function of the three inputs.  Thread-safe.
	 */
	kiln_status (*encode)(const uint8_t *dict, size_t dict_len, const uint8_t dict_sha[32],
			      const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len);
	/*
	 * Decode ENC[0..enc_len) with an independent decoder and the
	 * dictionary, and compare with SRC[0..src_len): KILN_OK when its
	 * header names DICT_SHA and it decodes, within the window limit a
	 * client holds it to, to exactly SRC; KILN_ERR_VERIFY otherwise;
	 * KILN_ERR_NOMEM.  Thread-safe.
	 */
	kiln_status (*verify)(const uint8_t *enc, size_t enc_len, const uint8_t *dict,
			      size_t dict_len, const uint8_t dict_sha[32], const uint8_t *src,
			      size_t src_len);
	/* Does the body ENC[0..enc_len) say it needs the dictionary DICT_SHA? */
	bool (*names_dictionary)(const uint8_t *enc, size_t enc_len, const uint8_t dict_sha[32]);
};

extern const struct kiln_dict_codec kiln_codec_dcz;

/* If NAME ends in "." + KILN_DICT_ID_HEX lowercase hex digits +
 * kiln_codec_dcz.suffix and is longer than that, the length of NAME
 * without it; otherwise 0. */
size_t kiln_dict_sibling_base_len(const char *name);

/* "ROOT/REL.<id>.dcz" for the dictionary DICT_SHA, malloc'ed (NULL when
 * out of memory); ROOT "" gives "/REL...". */
char *kiln_dict_sibling_path(const char *root, const char *rel, const uint8_t dict_sha[32]);

/* The dictionary id of DICT_SHA: KILN_DICT_ID_HEX hex digits and a NUL. */
void kiln_dict_id(const uint8_t dict_sha[32], char out[KILN_DICT_ID_HEX + 1]);



#endif
