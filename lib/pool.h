/*
 * pool.h - running one function on N threads.
 *
 * kiln's parallelism is deliberately simple; see the essay at the top of
 * pool.c.  The pool owns no queue: callers share work through an atomic
 * index into a list they built beforehand.
 */
#ifndef KILN_POOL_H
#define KILN_POOL_H

/*
 * Call FN(ARG, i) for i = 0..N-1, each on its own thread (i = 0 on the
 * calling thread), and return when every call has returned.  If a thread
 * cannot be created, fewer calls are made; FN must therefore pull work from a
 * shared source rather than expect a fixed share.  Returns how many calls
 * were made (at least 1).
 */
unsigned kiln_pool_run(unsigned n, void (*fn)(void *arg, unsigned worker), void *arg);

#endif
