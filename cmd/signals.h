/*
 * signals.h - how the kiln program lives with SIGINT, SIGTERM and SIGHUP
 * (the essay is in signals.c): the first cancels the run, which leaves a
 * tree it can vouch for; a second removes the run's temporary files and
 * dies.  The run and the first signal are the program's only global state.
 */
#ifndef KILN_SIGNALS_H
#define KILN_SIGNALS_H

#include "kiln.h"
#include "ui.h"

/* Block the fatal signals in this thread (every thread made later
 * inherits that) and start the thread that waits for them; ignore SIGXFSZ
 * and SIGPIPE.  Call before any other thread is made. */
void install_signals(void);

/* The run a signal cancels, and the ui that says so (NULL, NULL: none). */
void set_signal_run(struct kiln_run *run, struct ui *ui);

/* The first signal, once the run has stopped: die of it.  Returns if
 * there was none. */
void die_if_signalled(void);

#endif
