/*
 * host.h - what differs between the systems kiln runs on (host.c).
 *
 * The native kiln runs on Linux.  The WebAssembly kiln (packaging/wasm/)
 * runs under Node.js on Linux, macOS or Windows, where host.c stands in for
 * the C library's file calls that do not behave as Linux's; the rules
 * below are what those stand-ins apply, built into every kiln so that the
 * unit tests (tests/unit/test_host.c) hold them to account on Linux.
 */
#ifndef KILN_HOST_H
#define KILN_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* What a host's file system does not do as Linux's does. */
enum {
	/* Windows: its names (kiln_host_name_refused()), no mode bits, no
	 * O_NOFOLLOW, no rename over a file another program holds open */
	KILN_HOST_WINDOWS = 1u << 0,
	/* a name and one differing only in case (or, on macOS, in Unicode
	 * normalisation) are one file: macOS's and Windows's defaults */
	KILN_HOST_CASE_FOLDS = 1u << 1,
};

/* The KILN_HOST_* bits of the system this kiln runs on: 0 natively; in the
 * WebAssembly build, from Node's process.platform (win32: both bits,
 * darwin: KILN_HOST_CASE_FOLDS).  Thread-safe. */
unsigned kiln_host_flags(void);

/* Why a host with FLAGS cannot hold a file named NAME (one path component,
 * NUL-terminated), as a static string, or NULL when it can.  With
 * KILN_HOST_WINDOWS (Microsoft's "Naming Files, Paths, and Namespaces"):
 * the device names CON, PRN, AUX, NUL, COM1-COM9 and LPT1-LPT9 (and with
 * the superscript digits 1, 2, 3), in any case, alone or before a '.' or a
 * space; the characters < > : " / \ | ? * and 0x01-0x1f; a last character
 * '.' or ' '.  Without it, no name is refused (Linux, macOS).  Pure. */
const char *kiln_host_name_refused(const char *name, unsigned flags);

/* The permission bits a host with FLAGS reports for a file of type MODE
 * (S_IFMT bits) whose real bits are MODE's: with KILN_HOST_WINDOWS, which
 * keeps none, 0644 for every file and 0755 for every directory, so that a
 * sibling always has its source's; otherwise MODE unchanged.  Pure. */
mode_t kiln_host_mode(mode_t mode, unsigned flags);

/* Whether a call on a host with FLAGS that failed with ERRNUM on its
 * ATTEMPT-th try (from 0) is tried again, after waiting *WAIT_MS: on
 * Windows, a rename or a removal fails (EACCES, EPERM or EBUSY) while
 * another program (a server, a virus scanner, an indexer) holds the file
 * open; those are tried again for about 2 seconds in all.  Pure. */
bool kiln_host_retry(int errnum, unsigned attempt, unsigned flags, unsigned *wait_ms);

/* The runtime this kiln runs on, for `kiln --version`: false natively; in
 * the WebAssembly build *NAME "emscripten" and *VERSION its version, the
 * word WebAssembly and the version of the Node.js that runs it (static
 * strings).  Thread-safe. */
bool kiln_host_runtime(const char **name, const char **version);

#endif
