/*
 * fuzz_manifest.c - libFuzzer target for the manifest reader, the one parser
 * of outside input that incremental runs, check and clean trust: any bytes
 * must parse or be rejected without a crash, a leak or undefined behaviour,
 * and whatever it accepts must be safe to act on (paths inside the tree).
 */
#include "state.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiln_state st;

	memset(&st, 0, sizeof(st));
	if (kiln_state_parse((const char *)data, size, &st) == KILN_OK) {
		for (size_t i = 0; i < st.n; i++) {
			const char *rel = st.v[i].rec.rel;
			/* accepted paths stay inside the tree */
			if (!rel || !*rel || rel[0] == '/' || strstr(rel, "//") ||
			    strcmp(rel, "..") == 0 || strncmp(rel, "../", 3) == 0 ||
			    strstr(rel, "/../") || (strlen(rel) >= 3 && strcmp(rel + strlen(rel) - 3, "/..") == 0))
				abort();
			if (kiln_state_find(&st, rel) != &st.v[i])
				abort(); /* sorted and unique: lookup finds each entry */
		}
	}
	kiln_state_free(&st);
	return 0;
}
