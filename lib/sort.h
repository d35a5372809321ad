/*
 * sort.h - qsort(3) for lists that are usually in order already.
 *
 * A tree's paths come from the walk in an order that is nearly always the
 * order kiln sorts them by (each directory's names sorted, directories
 * visited in turn): a sort of them then costs one pass, not n log n
 * comparisons, which on a re-run of a large tree is most of what kiln does
 * besides stat(2).
 */
#ifndef KILN_SORT_H
#define KILN_SORT_H

#include <stddef.h>

/* Sort the N elements of SIZE bytes at BASE by CMP, as qsort(3) does (the
 * order of equal elements unspecified).  N - 1 comparisons when they are in
 * order already; otherwise those and qsort(3)'s.  Thread-safe as far as
 * CMP is; allocates only what qsort(3) does. */
void kiln_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
