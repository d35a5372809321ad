/*
 * archive_read.c - reading the input of kiln_run_archive() into the
 * staging tree: an archive, entry by entry through archive_read, or a
 * directory through its own walk (as `tar -C PARENT NAME` would archive
 * it).  Each entry becomes a struct item handed to kiln_arc_stage_entry(),
 * which validates and creates it; the first refusal stops reading.
 */
#include "archive_int.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Refusal for an archive entry type kiln does not carry, or NULL. */
static const char *type_refusal(mode_t type)
{
	switch (type) {
	case AE_IFCHR:
	case AE_IFBLK: return "device node, refused";
	case AE_IFIFO: return "FIFO, refused";
	case AE_IFSOCK: return "socket, refused";
	default: return "unknown entry type, refused";
	}
}

static char *dup_or_null(const char *s, bool *nomem)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*nomem = true;
	return d;
}

/* ---- an archive ---- */

/* Read every entry of the archive INPUT into the staging tree. */
kiln_status kiln_arc_read_archive(struct ctx *c)
{
	struct archive *a = archive_read_new();
	struct archive_entry *ae;
	struct data_source src = { a, -1 };
	kiln_status ret = KILN_OK;
	int r;

	if (!a)
		return KILN_ERR_NOMEM;
	/* not archive_read_support_format_all(): mtree would open the files
	 * its entries name, anywhere on this machine */
	archive_read_support_format_tar(a);
	archive_read_support_format_zip(a);
	archive_read_support_format_7zip(a);
	archive_read_support_format_cpio(a);
	archive_read_support_format_iso9660(a);
	archive_read_support_format_xar(a);
	archive_read_support_format_rar(a);
	archive_read_support_format_rar5(a);
	archive_read_support_format_cab(a);
	archive_read_support_format_lha(a);
	archive_read_support_format_ar(a);
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_lzma(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_filter_lz4(a);
	archive_read_support_filter_lzip(a);
	archive_read_support_filter_compress(a);
	if (archive_read_open_filename(a, c->input, BLOCK_SIZE) != ARCHIVE_OK) {
		kiln_arc_report(c, "", KILN_ERR_IO, 0, kiln_arc_msg(c, a, "cannot read archive"));
		archive_read_free(a);
		return KILN_ERR_IO;
	}
	while ((r = archive_read_next_header(a, &ae)) != ARCHIVE_EOF) {
		struct item it;
		const char *name, *why, *hardlink;
		mode_t type;
		bool nomem = false;

		if (r < ARCHIVE_WARN) {
			kiln_arc_report(c, "", KILN_ERR_IO, 0,
					kiln_arc_msg(c, a, "cannot read archive"));
			ret = KILN_ERR_IO;
			break;
		}
		if (atomic_load(&c->run->cancelled)) {
			ret = KILN_ERR_CANCELLED;
			break;
		}
		name = archive_entry_pathname(ae);
		if (!name)
			name = archive_entry_pathname_utf8(ae);
		if (!name) {
			kiln_arc_report(c, "", KILN_ERR_INVALID, 0,
					"an entry without a usable name, refused");
			ret = KILN_ERR_UNSAFE;
			break;
		}
		memset(&it, 0, sizeof(it));
		if ((why = kiln_arc_normalise(name, &it.norm)) != NULL) {
			if (strcmp(why, "out of memory") == 0) {
				ret = KILN_ERR_NOMEM;
				break;
			}
			kiln_arc_report(c, name, KILN_ERR_UNSAFE, 0, why);
			ret = KILN_ERR_UNSAFE;
			break;
		}
		hardlink = archive_entry_hardlink(ae);
		type = archive_entry_filetype(ae);
		if (hardlink || type == AE_IFREG)
			it.type = ITEM_FILE;
		else if (type == AE_IFDIR)
			it.type = ITEM_DIR;
		else if (type == AE_IFLNK)
			it.type = ITEM_LINK;
		else {
			kiln_arc_report(c, name, KILN_ERR_UNSAFE, 0, type_refusal(type));
			kiln_arc_item_free(&it);
			ret = KILN_ERR_UNSAFE;
			break;
		}
		if (it.type == ITEM_LINK) {
			const char *target = archive_entry_symlink(ae);
			if (!target)
				target = archive_entry_symlink_utf8(ae);
			if (!target || !*target) {
				kiln_arc_report(c, name, KILN_ERR_UNSAFE, 0,
						"link without a target, refused");
				kiln_arc_item_free(&it);
				ret = KILN_ERR_UNSAFE;
				break;
			}
			it.link = dup_or_null(target, &nomem);
		}
		it.name = dup_or_null(name, &nomem);
		it.mode = archive_entry_perm(ae) & 07777;
		if (archive_entry_mtime_is_set(ae)) {
			it.mtime = archive_entry_mtime(ae);
			it.mtime_ns = archive_entry_mtime_nsec(ae);
		}
		it.uid = archive_entry_uid(ae);
		it.gid = archive_entry_gid(ae);
		it.uname = dup_or_null(archive_entry_uname(ae), &nomem);
		it.gname = dup_or_null(archive_entry_gname(ae), &nomem);
		if (nomem) {
			kiln_arc_item_free(&it);
			ret = KILN_ERR_NOMEM;
			break;
		}
		ret = kiln_arc_stage_entry(c, name, &it, hardlink, &src,
					   archive_entry_size_is_set(ae) ? archive_entry_size(ae) : -1);
		if (ret != KILN_OK)
			break;
	}
	archive_read_free(a);
	return ret;
}

/* ---- a directory ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static kiln_status walk_input(struct ctx *c, int dfd, const char *prefix, const char *rel);

/* One name NAME of the input directory DFD, REL being the directory's path
 * relative to the input ("" for the input itself). */
static kiln_status visit_input(struct ctx *c, int dfd, const char *prefix, const char *rel,
			       const char *dname)
{
	struct data_source src = { NULL, -1 };
	char *path = *rel ? kiln_arc_cat3(rel, "/", dname) : strdup(dname);
	char *hardlink = NULL;
	struct item it;
	struct stat st;
	kiln_status ret = KILN_OK;
	bool nomem = false;

	memset(&it, 0, sizeof(it));
	if (!path)
		return KILN_ERR_NOMEM;
	if (fstatat(dfd, dname, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		kiln_arc_report(c, path, KILN_ERR_IO, errno, "cannot stat");
		ret = KILN_ERR_IO;
		goto out;
	}
	if (S_ISREG(st.st_mode))
		it.type = ITEM_FILE;
	else if (S_ISDIR(st.st_mode))
		it.type = ITEM_DIR;
	else if (S_ISLNK(st.st_mode))
		it.type = ITEM_LINK;
	else {
		kiln_arc_report(c, path, KILN_ERR_UNSAFE, 0, type_refusal(st.st_mode & S_IFMT));
		ret = KILN_ERR_UNSAFE;
		goto out;
	}
	it.name = kiln_arc_cat3(prefix, path, it.type == ITEM_DIR ? "/" : "");
	it.norm = *prefix ? kiln_arc_cat3(prefix, path, "") : strdup(path);
	if (it.norm && *prefix == '.') /* "./x": the tree is the root */
		memmove(it.norm, it.norm + 2, strlen(it.norm + 2) + 1);
	it.mode = st.st_mode & 07777;
	it.mtime = st.st_mtim.tv_sec;
	it.mtime_ns = st.st_mtim.tv_nsec;
	it.uid = st.st_uid;
	it.gid = st.st_gid;
	if (!it.name || !it.norm) {
		ret = KILN_ERR_NOMEM;
		goto out;
	}
	if (it.type == ITEM_LINK) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(dfd, dname, target, sizeof(target) - 1);
		if (n < 0) {
			kiln_arc_report(c, path, KILN_ERR_IO, errno, "cannot read link");
			ret = KILN_ERR_IO;
			goto out;
		}
		target[n] = '\0';
		it.link = dup_or_null(target, &nomem);
		if (nomem) {
			ret = KILN_ERR_NOMEM;
			goto out;
		}
	}
	if (it.type == ITEM_FILE) {
		if ((ret = kiln_arc_note_inode(c, &st, &hardlink)) != KILN_OK)
			goto out;
		if (!hardlink) {
			src.fd = openat(dfd, dname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			if (src.fd < 0) {
				kiln_arc_report(c, path, KILN_ERR_IO, errno, "cannot open");
				ret = KILN_ERR_IO;
				goto out;
			}
		}
	}
	ret = kiln_arc_stage_entry(c, path, &it, hardlink, &src,
				   hardlink ? 0 : (int64_t)st.st_size);
	if (ret == KILN_OK && S_ISDIR(st.st_mode)) {
		int sub = openat(dfd, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			kiln_arc_report(c, path, KILN_ERR_IO, errno, "cannot open directory");
			ret = KILN_ERR_IO;
		} else {
			ret = walk_input(c, sub, prefix, path);
		}
	}
out:
	if (src.fd >= 0)
		close(src.fd);
	kiln_arc_item_free(&it);
	free(hardlink);
	free(path);
	return ret;
}

/* Stage every entry below the directory DFD (closed here). */
static kiln_status walk_input(struct ctx *c, int dfd, const char *prefix, const char *rel)
{
	DIR *d = fdopendir(dfd);
	char **names = NULL;
	size_t n = 0, cap = 0;
	kiln_status ret = KILN_OK;
	struct dirent *e;

	if (!d) {
		close(dfd);
		return KILN_ERR_NOMEM;
	}
	errno = 0;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (n == cap) {
			char **v = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*v));
			if (!v) {
				ret = KILN_ERR_NOMEM;
				goto out;
			}
			names = v;
		}
		if (!(names[n] = strdup(e->d_name))) {
			ret = KILN_ERR_NOMEM;
			goto out;
		}
		n++;
	}
	if (errno) {
		kiln_arc_report(c, rel, KILN_ERR_IO, errno, "cannot read directory");
		ret = KILN_ERR_IO;
		goto out;
	}
	/* sorted, so that the first refused entry is always the same one */
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && ret == KILN_OK; i++)
		ret = visit_input(c, dirfd(d), prefix, rel, names[i]);
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return ret;
}

/* The directory INPUT, as `tar -C PARENT NAME` would archive it. */
kiln_status kiln_arc_read_directory(struct ctx *c)
{
	char *copy = kiln_root_normalise(c->input), *base, *prefix = NULL;
	struct item it;
	struct stat st;
	kiln_status ret;
	int fd;

	memset(&it, 0, sizeof(it));
	if (!copy)
		return KILN_ERR_NOMEM;
	base = strrchr(copy, '/');
	base = base ? base + 1 : copy;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		base = (char *)".";
	fd = open(c->input, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		kiln_arc_report(c, "", KILN_ERR_IO, errno, "cannot open directory");
		ret = KILN_ERR_IO;
		goto out;
	}
	prefix = kiln_arc_cat3(base, "/", "");
	it.name = strdup(prefix ? prefix : "");
	it.norm = strcmp(base, ".") == 0 ? strdup("") : strdup(base);
	it.type = ITEM_DIR;
	it.mode = st.st_mode & 07777;
	it.mtime = st.st_mtim.tv_sec;
	it.mtime_ns = st.st_mtim.tv_nsec;
	it.uid = st.st_uid;
	it.gid = st.st_gid;
	if (!prefix || !it.name || !it.norm) {
		kiln_arc_item_free(&it);
		ret = KILN_ERR_NOMEM;
		goto out;
	}
	ret = kiln_arc_stage_entry(c, "", &it, NULL, NULL, 0);
	if (ret == KILN_OK) {
		ret = walk_input(c, fd, prefix, "");
		fd = -1;
	}
out:
	if (fd >= 0)
		close(fd);
	free(prefix);
	free(copy);
	return ret;
}
