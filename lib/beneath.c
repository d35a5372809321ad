/*
 * beneath.c - the tree's directories, opened from its top without following
 * a link (see beneath.h).
 */
#include "beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

/* The pinned tops: their path as given, their descriptor, how many pins. */
#define MAX_PINS 16
static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pin {
	char *root;
	int fd;
	unsigned count;
} pins[MAX_PINS];

int kiln_beneath_pin(const char *root)
{
	struct pin *free_slot = NULL;
	int ret = 0, e = 0;

	pthread_mutex_lock(&pin_lock);
	for (size_t i = 0; i < MAX_PINS; i++) {
		if (pins[i].root && strcmp(pins[i].root, root) == 0) {
			pins[i].count++;
			goto out;
		}
		if (!pins[i].root && !free_slot)
			free_slot = &pins[i];
	}
	if (!free_slot)
		goto out; /* so many trees at once: this one goes unpinned */
	if ((free_slot->fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		e = errno;
		ret = -1;
		goto out;
	}
	if (!(free_slot->root = strdup(root))) {
		close(free_slot->fd);
		e = ENOMEM;
		ret = -1;
		goto out;
	}
	free_slot->count = 1;
out:
	pthread_mutex_unlock(&pin_lock);
	errno = e;
	return ret;
}

void kiln_beneath_unpin(const char *root)
{
	pthread_mutex_lock(&pin_lock);
	for (size_t i = 0; i < MAX_PINS; i++)
		if (pins[i].root && strcmp(pins[i].root, root) == 0) {
			if (--pins[i].count == 0) {
				close(pins[i].fd);
				free(pins[i].root);
				pins[i].root = NULL;
			}
			break;
		}
	pthread_mutex_unlock(&pin_lock);
}

int kiln_beneath_top(const char *root)
{
	int fd = -2;

	pthread_mutex_lock(&pin_lock);
	for (size_t i = 0; i < MAX_PINS && fd == -2; i++)
		if (pins[i].root && strcmp(pins[i].root, root) == 0)
			/* a new open file description, not a dup: its own
			 * directory position and its own flock(2) */
			fd = openat(pins[i].fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	pthread_mutex_unlock(&pin_lock);
	return fd == -2 ? open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : fd;
}

/* DIRREL (a relative directory path, LEN bytes, no leading '/') opened
 * beneath ROOTFD without following a link. */
static int open_dir_beneath(int rootfd, const char *dirrel, size_t len)
{
	char *p = strndup(dirrel, len), *comp, *save = NULL;
	int fd, next, e;

	if (!p)
		return -1;
#ifdef SYS_openat2
	{
		struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
					.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
						   RESOLVE_NO_MAGICLINKS };
		fd = (int)syscall(SYS_openat2, rootfd, p, &how, sizeof(how));
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM && errno != EINVAL)) {
			e = errno;
			free(p);
			if (fd < 0 && (e == ELOOP || e == EXDEV || e == ENOTDIR))
				e = ENOENT; /* a link on the way: not in the tree */
			errno = e;
			return fd;
		}
	}
#endif
	/* no openat2: one component at a time, each directory opened kept on
	 * a stack, so that ".." goes back to the one it came from (as
	 * RESOLVE_BENEATH resolves it), never through the file system's own
	 * "..", which a directory moved meanwhile could lead outside; and
	 * never above the top */
	{
		size_t depth = 0, max = 1;
		int *stack;

		for (const char *c = p; *c; c++)
			max += *c == '/';
		if (!(stack = malloc((max + 1) * sizeof(*stack))) || (fd = dup(rootfd)) < 0) {
			free(stack);
			free(p);
			return -1;
		}
		stack[depth++] = fd;
		for (comp = strtok_r(p, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
			if (strcmp(comp, ".") == 0)
				continue;
			if (strcmp(comp, "..") == 0) {
				if (depth == 1) {
					next = -1;
					e = ENOENT; /* never above the top */
				} else {
					close(stack[--depth]);
					continue;
				}
			} else {
				next = openat(stack[depth - 1], comp,
					      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				e = errno;
			}
			if (next < 0) {
				while (depth > 0)
					close(stack[--depth]);
				free(stack);
				free(p);
				errno = (e == ELOOP || e == ENOTDIR) ? ENOENT : e;
				return -1;
			}
			stack[depth++] = next;
		}
		fd = stack[--depth];
		while (depth > 0)
			close(stack[--depth]);
		free(stack);
	}
	free(p);
	return fd;
}

int kiln_beneath_parent(const char *root, const char *path, const char **base)
{
	size_t n = strlen(root);
	const char *rel, *slash;
	int rootfd, fd, e;

	*base = path;
	if (strncmp(path, root, n) != 0 || (path[n] != '/' && !(n > 0 && root[n - 1] == '/')))
		return AT_FDCWD;
	rel = path + n;
	while (*rel == '/')
		rel++;
	if (!*rel) {
		errno = EINVAL; /* the top itself has no parent in the tree */
		return -1;
	}
	if ((rootfd = kiln_beneath_top(root)) < 0)
		return -1;
	slash = strrchr(rel, '/');
	if (strcmp(slash ? slash + 1 : rel, "..") == 0) {
		close(rootfd);
		errno = ENOENT; /* a last ".." may name the directory above the top */
		return -1;
	}
	if (!slash) {
		*base = rel;
		return rootfd;
	}
	fd = open_dir_beneath(rootfd, rel, (size_t)(slash - rel));
	e = errno;
	close(rootfd);
	errno = e;
	if (fd >= 0)
		*base = slash + 1;
	return fd;
}

char *kiln_beneath_link_on_way(const char *root, const char *path)
{
	size_t n = strlen(root);
	const char *rel = path + n, *comp, *end;
	char *found = NULL, *name;
	int fd, next;
	struct stat st;

	if (strncmp(path, root, n) != 0 || (path[n] != '/' && !(n > 0 && root[n - 1] == '/')))
		return NULL;
	if ((fd = kiln_beneath_top(root)) < 0)
		return NULL;
	for (comp = rel; fd >= 0; comp = end + 1) {
		while (*comp == '/')
			comp++;
		if (!(end = strchr(comp, '/')))
			break; /* the last component: not on the way */
		if (!(name = strndup(comp, (size_t)(end - comp))))
			break;
		if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
			found = strndup(path, (size_t)(end - path));
			free(name);
			break;
		}
		next = strcmp(name, "..") == 0 ? -1
						: openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
									   O_CLOEXEC);
		free(name);
		close(fd);
		fd = next;
	}
	if (fd >= 0)
		close(fd);
	return found;
}

/* Run the call on PATH's parent, closing it after, errno kept. */
#define BENEATH(root, path, call)                                      \
	do {                                                           \
		const char *base;                                      \
		int dfd = kiln_beneath_parent(root, path, &base), r, e; \
		if (dfd == -1)                                         \
			return -1;                                     \
		r = (call);                                            \
		e = errno;                                             \
		if (dfd >= 0)                                          \
			close(dfd);                                    \
		errno = e;                                             \
		return r;                                              \
	} while (0)

int kiln_beneath_lstat(const char *root, const char *path, struct stat *st)
{
	BENEATH(root, path, fstatat(dfd, base, st, AT_SYMLINK_NOFOLLOW));
}

int kiln_beneath_open(const char *root, const char *path, int flags, mode_t mode)
{
	BENEATH(root, path, openat(dfd, base, flags | O_NOFOLLOW | O_CLOEXEC, mode));
}

int kiln_beneath_unlink(const char *root, const char *path)
{
	BENEATH(root, path, unlinkat(dfd, base, 0));
}

int kiln_beneath_openat(int topfd, const char *rel, int flags)
{
	const char *slash = strrchr(rel, '/');
	int dfd, fd, e;

	if (strcmp(slash ? slash + 1 : rel, "..") == 0) {
		errno = ENOENT; /* never the directory above */
		return -1;
	}
#ifdef SYS_openat2
	{
		struct open_how how = { .flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
					.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
						   RESOLVE_NO_MAGICLINKS };
		fd = (int)syscall(SYS_openat2, topfd, rel, &how, sizeof(how));
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM && errno != EINVAL)) {
			if (fd < 0 && (errno == ELOOP || errno == EXDEV || errno == ENOTDIR))
				errno = ENOENT;
			return fd;
		}
	}
#endif
	if (!slash)
		return openat(topfd, rel, flags | O_NOFOLLOW | O_CLOEXEC);
	if ((dfd = open_dir_beneath(topfd, rel, (size_t)(slash - rel))) < 0)
		return -1;
	fd = openat(dfd, slash + 1, flags | O_NOFOLLOW | O_CLOEXEC);
	e = errno;
	close(dfd);
	errno = e == ELOOP ? ENOENT : e;
	return fd;
}
