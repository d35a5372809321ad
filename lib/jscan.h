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

#endif
