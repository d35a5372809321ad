/* record.c - see record.h. */
#include "record.h"

#include <stdlib.h>
#include <string.h>

bool kiln_record_copy(struct kiln_record *dst, const struct kiln_record *src)
{
	*dst = *src;
	dst->rel = strdup(src->rel);
	return dst->rel != NULL;
}

void kiln_record_free(struct kiln_record *r)
{
	free(r->rel);
	r->rel = NULL;
}
