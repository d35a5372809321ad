/* record.c - see record.h. */
#include "record.h"

#include <stdlib.h>
#include <string.h>

bool kiln_record_copy(struct kiln_record *dst, const struct kiln_record *src)
{
	*dst = *src;
	dst->dicts = NULL;
	dst->ndicts = 0;
	if (!(dst->rel = strdup(src->rel)))
		return false;
	if (src->ndicts && !(dst->dicts = calloc(src->ndicts, sizeof(*dst->dicts))))
		goto nomem;
	for (size_t i = 0; i < src->ndicts; i++) {
		dst->dicts[i] = src->dicts[i];
		dst->ndicts++;
		if (!(dst->dicts[i].dict_path = strdup(src->dicts[i].dict_path)))
			goto nomem;
	}
	return true;
nomem:
	kiln_record_free(dst);
	return false;
}

void kiln_record_free_dicts(struct kiln_record *r)
{
	for (size_t i = 0; i < r->ndicts; i++)
		free(r->dicts[i].dict_path);
	free(r->dicts);
	r->dicts = NULL;
	r->ndicts = 0;
}

void kiln_record_free(struct kiln_record *r)
{
	free(r->rel);
	r->rel = NULL;
	kiln_record_free_dicts(r);
}
