/*
 * jscan.h - walking a large JSON object member by member, without a tree
 * of the whole document: the members' boundaries are found by a scan that
 * knows only strings and brackets, and each key and value is then parsed
 * by jansson on its own (so every byte that is used is still checked by
 * jansson).  The scan is exact on valid JSON; on anything else it may stop
 * early (KILN_JSCAN_BAD) or hand jansson a slice jansson rejects, so a
 * caller that falls back to parsing the whole text with jansson whenever
 * the scan or a slice fails reads exactly what jansson would.
 */
#ifndef KILN_JSCAN_H
#define KILN_JSCAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	KILN_JSCAN_END = 0,     /* the object's closing brace: no more members */
	KILN_JSCAN_MEMBER = 1,  /* one member */
	KILN_JSCAN_BAD = -1,    /* not the shape of valid JSON here */
	KILN_JSCAN_NOMEM = -2,  /* jansson ran out of memory on the key */
};

/* A position in TEXT[0..len): the members of the object opened at START. */
struct kiln_jscan {
	const char *text;
	size_t len, pos;
	bool first;
};

/*
 * Start *S on the object whose '{' is at TEXT[at] after optional JSON
 * whitespace.  False if there is no '{' there.
 */
bool kiln_jscan_open(struct kiln_jscan *s, const char *text, size_t len, size_t at);

/*
 * The next member of *S: KILN_JSCAN_MEMBER with the member's value in
 * TEXT[*vat..*vend) (whitespace trimmed) and, when KEY is not NULL, its key
 * parsed by jansson in *KEY (a JSON string the caller json_decref()s);
 * KILN_JSCAN_END after the last one (then kiln_jscan_after() is the offset
 * just past the '}'); KILN_JSCAN_BAD, KILN_JSCAN_NOMEM.
 */
int kiln_jscan_next(struct kiln_jscan *s, json_t **key, size_t *vat, size_t *vend);

/* The offset just past the object's '}' once kiln_jscan_next() said END. */
size_t kiln_jscan_after(const struct kiln_jscan *s);

/* TEXT[at..len) holds only JSON whitespace. */
bool kiln_jscan_blank(const char *text, size_t len, size_t at);

/*
 * The same scan over a file read through a window, for a document too big
 * to hold: a JSON object whose members are read in order, and one of
 * whose members may be an object read member by member in turn; memory
 * for the member being read, not for the file.  Slices and keys are handed
 * to jansson as above, with the same caveats.
 */
struct kiln_jwin {
	int fd;
	uint64_t size;        /* the file's size: no byte past it is read */
	char *buf;            /* the file's bytes [base, base + len) */
	size_t len, cap;
	uint64_t base, pos;   /* POS: where the scan is */
	int depth;            /* 1: the top object's members, 2: a member's */
	bool first[3];
	bool failed;          /* a read failed, or no memory for the window */
};

/* Start *W on FD (SIZE bytes), with a window of CAP bytes to begin with:
 * false (W closed) unless a '{' comes first, after JSON whitespace. */
bool kiln_jwin_open(struct kiln_jwin *w, int fd, uint64_t size, size_t cap);

/* Free W's window (the descriptor is the caller's). */
void kiln_jwin_close(struct kiln_jwin *w);

/* The next member of the object being read, its key parsed by jansson in
 * *KEY (the caller json_decref()s it): KILN_JSCAN_MEMBER, then read its
 * value with kiln_jwin_value() or kiln_jwin_enter(); KILN_JSCAN_END at the
 * object's '}' (a member object's: the scan is back in the top object);
 * KILN_JSCAN_BAD (w->failed when it could not read); KILN_JSCAN_NOMEM. */
int kiln_jwin_key(struct kiln_jwin *w, json_t **key);

/* The value of the member whose key was just read, whitespace trimmed, at
 * *P, *N bytes: valid until W's next call.  False: not the shape of JSON
 * (w->failed: it could not read). */
bool kiln_jwin_value(struct kiln_jwin *w, const char **p, size_t *n);

/* The value of the member whose key was just read is an object, in the
 * top object: read its members next.  False if it does not open with '{'. */
bool kiln_jwin_enter(struct kiln_jwin *w);

/* Once the top object ended: only JSON whitespace to the end of the file. */
bool kiln_jwin_done(struct kiln_jwin *w);

#endif
