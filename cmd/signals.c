/*
 * signals.c - see signals.h.
 */
#include "signals.h"

#include <pthread.h>
#include <signal.h>
#include <stddef.h>

/*
 * Signals.  SIGINT, SIGTERM and SIGHUP are blocked in every thread and
 * taken by one thread in sigwait().  The first one cancels the run: it
 * stops encoding, leaves every file with siblings it can vouch for, writes
 * the manifest of what is done and returns; main() then dies of that same
 * signal.  A second one (the user insists) removes the run's temporary files
 * at once and dies; the run's journal stays, so the next run still knows
 * what this one wrote.  The run and the first signal are the only global
 * state of the program.
 */
static const int fatal_signals[] = { SIGINT, SIGTERM, SIGHUP };
static pthread_mutex_t signal_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kiln_run *signal_run;
static struct ui *signal_ui; /* where to say so, clearing the progress line */
static int first_signal; /* under signal_lock */

/* Die of SIG, as if it had never been caught. */
static void die_of(int sig)
{
	sigset_t one;

	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
}

static void *signal_main(void *arg)
{
	sigset_t *set = arg;
	int sig;

	for (;;) {
		if (sigwait(set, &sig) != 0)
			return NULL;
		pthread_mutex_lock(&signal_lock);
		if (!first_signal && signal_run) {
			first_signal = sig;
			kiln_run_cancel(signal_run);
			ui_interrupted(signal_ui);
			pthread_mutex_unlock(&signal_lock);
			continue;
		}
		if (signal_run)
			kiln_run_remove_temps(signal_run);
		die_of(sig); /* the default action ends the whole process */
		pthread_mutex_unlock(&signal_lock);
	}
}

/* Block the fatal signals here (every thread made later inherits that) and
 * start the thread that waits for them. */
void install_signals(void)
{
	static sigset_t set;
	pthread_t tid;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		sigaddset(&set, fatal_signals[i]);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pthread_create(&tid, NULL, signal_main, &set) == 0)
		pthread_detach(tid);
	/* over a file size limit or into a closed pipe, a write should fail
	 * with an error kiln reports, not kill the process mid-file */
	signal(SIGXFSZ, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
}

void set_signal_run(struct kiln_run *run, struct ui *ui)
{
	pthread_mutex_lock(&signal_lock);
	signal_run = run;
	signal_ui = ui;
	pthread_mutex_unlock(&signal_lock);
}

/* The first signal, once the run has stopped: die of it. */
void die_if_signalled(void)
{
	int sig;

	pthread_mutex_lock(&signal_lock);
	sig = first_signal;
	signal_run = NULL;
	pthread_mutex_unlock(&signal_lock);
	if (sig)
		die_of(sig);
}
