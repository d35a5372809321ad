/* sibling.c - see sibling.h. */
#include "sibling.h"
#include "beneath.h"
#include "codec.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct kiln_file_meta kiln_sibling_meta(const struct stat *src, bool fsync,
					struct timespec times[2])
{
	times[0] = src->st_atim;
	times[1] = src->st_mtim;
	return (struct kiln_file_meta){
		.mode = src->st_mode & 0777,
		.times = times,
		.uid = src->st_uid,
		.gid = src->st_gid,
		.set_owner = true,
		.fsync = fsync,
		.refuse_read_only = true,
	};
}

kiln_status kiln_sibling_check(const char *final_path, const struct stat *src, bool own,
			       struct kiln_error *err)
{
	struct timespec times[2];
	struct kiln_file_meta meta = kiln_sibling_meta(src, false, times);

	meta.refuse_read_only = !own;

	return kiln_final_check(final_path, &meta, err);
}

kiln_status kiln_sibling_write(struct kiln_temps *reg, const char *final_path,
			       const uint8_t *data, size_t len, const struct stat *src,
			       bool own, bool fsync, struct kiln_error *err)
{
	struct timespec times[2];
	struct kiln_file_meta meta = kiln_sibling_meta(src, fsync, times);

	meta.refuse_read_only = !own;

	return kiln_write_atomic(reg, final_path, data, len, &meta, err);
}

bool kiln_sibling_name_fits(const char *rel, const char *suffix)
{
	const char *base = strrchr(rel, '/');

	return strlen(base ? base + 1 : rel) + strlen(suffix) <= NAME_MAX;
}

bool kiln_sibling_fix_meta_fd(int fd, const struct stat *st, const struct stat *src,
			      bool dry_run)
{
	struct timespec times[2] = { src->st_atim, src->st_mtim };
	bool mode_differs = (st->st_mode & 0777) != (src->st_mode & 0777);
	bool mtime_differs = st->st_mtim.tv_sec != src->st_mtim.tv_sec ||
			     st->st_mtim.tv_nsec != src->st_mtim.tv_nsec;

	/* hard-linked elsewhere (a `cp -al` snapshot): its mode and mtime are
	 * the other name's too, so it is not changed in place */
	if (st->st_nlink > 1 && (mode_differs || mtime_differs))
		return false;
	if (dry_run)
		return true;
	if (mode_differs && fchmod(fd, src->st_mode & 0777) != 0)
		return false;
	/* a touched source: same Last-Modified again */
	if (mtime_differs && futimens(fd, times) != 0)
		return false;
	return true;
}

bool kiln_sibling_fix_meta(const char *root, const char *path, const struct stat *src)
{
	int fd = kiln_beneath_open(root, path, O_RDONLY | O_NONBLOCK, 0);
	struct stat st;
	bool ok;

	if (fd < 0)
		return false;
	ok = fstat(fd, &st) == 0 && kiln_sibling_fix_meta_fd(fd, &st, src, false);
	close(fd);
	return ok;
}

int kiln_sibling_remove(const char *root, const char *path)
{
	return kiln_beneath_unlink(root, path);
}

int kiln_sibling_decodes(const char *root, const char *path, kiln_coding c, int src_fd,
			 uint64_t src_size)
{
	int fd, ret = -1;
	struct stat st;
	kiln_status s;

	if (src_fd < 0 || (fd = kiln_beneath_open(root, path, O_RDONLY | O_NONBLOCK, 0)) < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		s = kiln_codecs[c]->verify_fd(fd, (uint64_t)st.st_size, src_fd, src_size);
		ret = s == KILN_OK ? 1 : s == KILN_ERR_VERIFY ? 0 : -1;
	}
	close(fd);
	return ret;
}
