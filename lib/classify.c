/*
 * classify.c - sibling names, kiln's own outputs, media by extension and by
 * magic bytes, and include/exclude globs.
 *
 * A file is media if either its extension or its first bytes say so: a PNG
 * renamed logo.txt is still a PNG, and a .woff2 is compressed even if its
 * header is damaged.  Magic checks are kept to signatures long or specific
 * enough not to fire on text, and count only in a header that could not
 * start a text file (see looks_like_text()).
 */
#include "classify.h"

#include "server.h"

#include "codec.h"
#include "index.h"
#include "kiln.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

bool kiln_is_temp_name(const char *name)
{
	/* ".kiln-" + 6 + ".tmp" */
	return strlen(name) == 16 && strncmp(name, ".kiln-", 6) == 0 &&
	       strcmp(name + 12, ".tmp") == 0;
}

bool kiln_is_journal_name(const char *name)
{
	return strlen(name) == 20 && strncmp(name, ".kiln-journal-", 14) == 0;
}

/* A decimal number 1..KILN_MAX_SHARDS without leading zeros at *S, which
 * is moved past it; 0 if there is none. */
static unsigned number(const char **s)
{
	unsigned v = 0;
	const char *p = *s;

	if (*p < '1' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (unsigned)(*p++ - '0');
		if (v > KILN_MAX_SHARDS)
			return 0;
	}
	*s = p;
	return v;
}

bool kiln_is_part_name(const char *name, unsigned *k, unsigned *n, const char **stem)
{
	const char *s = name;
	size_t len;
	unsigned kk, nn;

	if (strncmp(s, "kiln-manifest.shard-", strlen("kiln-manifest.shard-")) != 0)
		return false;
	s += strlen("kiln-manifest.shard-");
	if (!(kk = number(&s)) || strncmp(s, "-of-", 4) != 0)
		return false;
	s += 4;
	if (!(nn = number(&s)) || kk > nn)
		return false;
	len = strlen(s);
	if (len < 5 || strcmp(s + len - 5, ".json") != 0 || (len > 5 && (len < 7 || *s != '.')))
		return false;
	if (k)
		*k = kk;
	if (n)
		*n = nn;
	if (stem)
		*stem = len > 5 ? s + 1 : NULL;
	return true;
}

bool kiln_is_own_output(const char *name)
{
	for (unsigned sv = 0; sv < kiln_nservers; sv++)
		for (const struct kiln_server_file *f = kiln_servers[sv]->files; f->name; f++)
			if (strcmp(name, f->name) == 0)
				return true;
	return strcmp(name, KILN_MANIFEST_NAME) == 0 || strcmp(name, KILN_INDEX_NAME) == 0 ||
	       kiln_is_temp_name(name) ||
	       kiln_is_journal_name(name) || kiln_is_part_name(name, NULL, NULL, NULL);
}

static const char *const media_extensions[] = {
	/* images */
	"jpg", "jpeg", "png", "apng", "gif", "webp", "avif", "heic", "heif", "jxl",
	/* audio and video */
	"mp3", "mp4", "m4a", "m4v", "mov", "webm", "mkv", "ogg", "oga", "ogv",
	"opus", "flac", "aac", "3gp", "avi", "wmv", "flv", "swf", "mpg", "mpeg",
	/* archives and compressed streams */
	"zip", "tgz", "bz2", "tbz", "xz", "7z", "rar", "lz4",
	"lzma", "svgz",
	/* compressed fonts */
	"woff", "woff2",
	/* zip containers */
	"jar", "apk", "epub", "docx", "xlsx", "pptx", "odt", "ods", "odp",
	NULL
};

bool kiln_media_extension(const char *name)
{
	const char *base = strrchr(name, '/');
	const char *dot;

	base = base ? base + 1 : name;
	dot = strrchr(base, '.');
	if (!dot || dot == base || dot[1] == '\0')
		return false; /* no extension, a dotfile, or "file." */
	for (const char *const *e = media_extensions; *e; e++)
		if (strcasecmp(dot + 1, *e) == 0)
			return true;
	/* a sibling's suffix names a compressed stream too */
	return kiln_is_sibling_extension(dot + 1);
}

struct magic {
	unsigned char offset;
	unsigned char len;
	const char *bytes;
};

static const struct magic magics[] = {
	{ 0, 8, "\x89PNG\r\n\x1a\n" },
	{ 0, 3, "\xff\xd8\xff" },              /* JPEG */
	{ 0, 4, "GIF8" },
	{ 8, 4, "WEBP" },                      /* RIFF....WEBP */
	{ 8, 4, "AVI " },                      /* RIFF....AVI  */
	{ 4, 4, "ftyp" },                      /* ISO-BMFF */
	{ 0, 2, "\xff\x0a" },                  /* JPEG XL codestream */
	{ 0, 12, "\0\0\0\x0cJXL \r\n\x87\n" }, /* JPEG XL container */
	{ 0, 4, "\x1a\x45\xdf\xa3" },          /* Matroska, WebM */
	{ 0, 4, "OggS" },
	{ 0, 4, "fLaC" },
	{ 0, 3, "ID3" },                       /* MP3 with ID3v2 tag */
	{ 0, 2, "\xff\xfb" },                  /* MPEG-1 layer III */
	{ 0, 2, "\xff\xf3" },                  /* MPEG-2 layer III */
	{ 0, 2, "\xff\xf2" },
	{ 0, 2, "\xff\xf1" },                  /* AAC ADTS, MPEG-4 */
	{ 0, 2, "\xff\xf9" },                  /* AAC ADTS, MPEG-2 */
	{ 0, 4, "FLV\x01" },
	{ 0, 8, "\x30\x26\xb2\x75\x8e\x66\xcf\x11" }, /* ASF: WMV, WMA */
	{ 0, 4, "\0\0\x01\xba" },              /* MPEG program stream */
	{ 0, 4, "PK\x03\x04" },                /* ZIP and its containers */
	{ 0, 4, "PK\x05\x06" },                /* empty ZIP */
	{ 0, 4, "PK\x07\x08" },                /* spanned ZIP */
	{ 0, 2, "\x1f\x8b" },                  /* gzip */
	{ 0, 3, "BZh" },                       /* bzip2 (+ digit, checked below) */
	{ 0, 6, "\xfd" "7zXZ\0" },             /* xz */
	{ 0, 4, "\x28\xb5\x2f\xfd" },          /* zstd frame */
	{ 0, 6, "7z\xbc\xaf\x27\x1c" },        /* 7z */
	{ 0, 6, "Rar!\x1a\x07" },
	{ 0, 4, "\x04\x22\x4d\x18" },          /* LZ4 frame */
	{ 0, 4, "wOFF" },
	{ 0, 4, "wOF2" },
};

/*
 * Could these first bytes start a text file: no NUL or other C0 control but
 * tab, newline, form feed and carriage return, no DEL, and valid UTF-8 (a
 * sequence cut by the end of the window allowed)?  Every compressed format
 * has binary bytes within its first 16 (sizes, versions, flags), so a
 * signature only counts in a header that is not text: "GIF89a explained"
 * and "ID3 tags" at the top of a Markdown file stay text.
 */
static bool looks_like_text(const unsigned char *buf, size_t n)
{
	char tmp[KILN_MAGIC_BYTES + 1];
	size_t i = 0;

	if (n > KILN_MAGIC_BYTES)
		n = KILN_MAGIC_BYTES;
	memcpy(tmp, buf, n);
	tmp[n] = '\0';
	while (i < n) {
		unsigned char c = buf[i];
		size_t k;
		if (c == 0 || c == 0x7f || (c < 0x20 && c != '\t' && c != '\n' && c != '\f' && c != '\r'))
			return false;
		k = kiln_utf8_len(tmp + i);
		if (k == 0) {
			/* a valid lead byte whose sequence the window cuts short */
			size_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
			return need && i + need > n;
		}
		i += k;
	}
	return true;
}

bool kiln_media_magic(const unsigned char *buf, size_t n)
{
	if (looks_like_text(buf, n))
		return false;
	for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]); i++) {
		const struct magic *m = &magics[i];
		if (n < (size_t)m->offset + m->len)
			continue;
		if (memcmp(buf + m->offset, m->bytes, m->len) != 0)
			continue;
		if (m->bytes[0] == 'B' && (n < 4 || buf[3] < '1' || buf[3] > '9'))
			continue; /* "BZh" must be followed by the block size digit */
		if (m->offset == 8 && memcmp(buf, "RIFF", 4) != 0)
			continue;
		return true;
	}
	return false;
}

