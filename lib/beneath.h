/*
 * beneath.h - changing the tree only through directories opened beneath
 * its top, never through a path string that may cross a link.
 *
 * Every path here is ROOT "/" REL, as kiln_path_join() makes it, where ROOT
 * is the tree's top as the user named it (followed once, like any
 * command-line argument: a tree's owner pins it with kiln_beneath_pin()
 * when it begins, and from then on ROOT means the directory it named then,
 * even if ROOT, or a link on the way to it, is changed to name another --
 * the `current -> releases/N` flip of a deploy).  The directory holding REL's last component is
 * opened from ROOT one component at a time without following a link
 * (openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where the kernel
 * has it, else openat(2) with O_NOFOLLOW | O_DIRECTORY per component), and
 * the operation is done relative to it.  A component that is a symbolic
 * link, or not a directory, means the name is not in the tree: the call
 * fails with errno ENOENT, and nothing outside the tree is read, changed
 * or removed.  The last component is never followed either, and a last
 * component ".." (which may name the directory above the top) is not in
 * the tree (ENOENT).
 *
 * A PATH that does not start with ROOT "/" is not in the tree (a manifest
 * or snippet named elsewhere, the cache): it is used as it is.
 *
 * Thread-safe: no state is kept between calls.
 */
#ifndef KILN_BENEATH_H
#define KILN_BENEATH_H

#include <sys/stat.h>
#include <sys/types.h>

/* Open ROOT once and remember it: until kiln_beneath_unpin(ROOT), every
 * function here given ROOT (the same string) works in that directory.
 * Pins are counted (a second pin of one ROOT shares the first's).  0, or
 * -1 with errno set (ROOT cannot be opened as a directory: the caller's
 * walk says why).  Thread-safe. */
int kiln_beneath_pin(const char *root);
void kiln_beneath_unpin(const char *root);

/* A new descriptor of ROOT's directory: the pinned one, or ROOT opened now
 * when it is not pinned.  The caller closes it; -1 with errno set. */
int kiln_beneath_top(const char *root);

/* The directory holding PATH's last component, opened beneath ROOT
 * (O_DIRECTORY | O_PATH is not used: the descriptor can be read with
 * getdents); *BASE points into PATH at the last component.  Returns the
 * descriptor (the caller closes it), AT_FDCWD for a PATH outside ROOT
 * (*BASE is then PATH), or -1 with errno set (ENOENT for a link on the
 * way). */
int kiln_beneath_parent(const char *root, const char *path, const char **base);

/* lstat(2) of PATH, beneath ROOT: 0, or -1 with errno (ENOENT when PATH
 * is not in the tree). */
int kiln_beneath_lstat(const char *root, const char *path, struct stat *st);

/* open(2) of PATH with FLAGS | O_NOFOLLOW | O_CLOEXEC (and MODE when FLAGS
 * creates), beneath ROOT: a descriptor, or -1 with errno. */
int kiln_beneath_open(const char *root, const char *path, int flags, mode_t mode);

/* The first directory on the way from ROOT to PATH's last component that
 * is a symbolic link now (malloc'ed: ROOT joined with the components up to
 * it), or NULL: none is, or PATH is outside ROOT, or out of memory.  Said
 * to the user when a record's sibling is out of reach behind it. */
char *kiln_beneath_link_on_way(const char *root, const char *path);

/* open(2) of REL (relative, no leading '/', no "." or ".." component
 * needed) with FLAGS | O_NOFOLLOW | O_CLOEXEC, beneath the directory TOPFD
 * (a tree's top the caller holds open): no link is followed on the way or
 * at the end.  A descriptor, or -1 with errno (ENOENT for a link on the
 * way).  For readers that keep the top open themselves (kiln serve). */
int kiln_beneath_openat(int topfd, const char *rel, int flags);

/* unlink(2) of PATH, beneath ROOT: 0, or -1 with errno (ENOENT when PATH
 * is not in the tree: nothing of the tree's was there to remove). */
int kiln_beneath_unlink(const char *root, const char *path);

#endif
