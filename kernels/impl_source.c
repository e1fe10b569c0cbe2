/*
 * impl_source.c: the bytes of a user's implementation, read once, verified,
 * and handed to the child as those bytes (never re-opened by path).
 *
 * A registered implementation (kb_request.entry_directory set, by the
 * server) is opened by a walk from "/" that follows no symbolic link: each
 * component with openat(O_NOFOLLOW), so a directory or file swapped for a
 * link after registration, or a link inside the tree, is refused; its path
 * must lie under that directory (kernelindex.implementation_directory,
 * resolved); its sha256 is compared with the one recorded at registration
 * (entry_digest; at registration there is none yet).  An unregistered entry (kbench --impl) is opened once the
 * ordinary way.  Either way what runs is what was read and digested: the
 * python harness compiles the source it is given on fd 5, the library child
 * dlopen()s a sealed memfd copy (/proc/self/fd/N), and the run names that
 * digest (spec.source.contentDigest).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "impl_int.h"
#include "ki_json.h"

#define MAX_SOURCE_BYTES ((size_t) 1 << 30)

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

/* An entry "python:/dir/file.py:function" or "library:/dir/libx.so:symbol" into its kind, path and symbol. */
bool
kb_ext_split_entry(const char *entry, int *kind, char *path, size_t pathlen, char *symbol, size_t symlen,
				   char *err, size_t errlen)
{
	const char *rest,
			   *colon;

	if (strncmp(entry, "python:", 7) == 0)
		*kind = KB_EXT_PYTHON;
	else if (strncmp(entry, "library:", 8) == 0)
		*kind = KB_EXT_LIBRARY;
	else
	{
		snprintf(err, errlen, "entry '%s' must be python:/dir/file.py:function or library:/dir/libx.so:symbol", entry);
		return false;
	}
	rest = entry + (*kind == KB_EXT_PYTHON ? 7 : 8);
	colon = strrchr(rest, ':');
	if (!colon || colon == rest || !colon[1])
	{
		snprintf(err, errlen, "entry '%s' names no %s: write %s", entry,
				 *kind == KB_EXT_PYTHON ? "function" : "symbol",
				 *kind == KB_EXT_PYTHON ? "python:/dir/file.py:function" : "library:/dir/libx.so:symbol");
		return false;
	}
	if ((size_t) (colon - rest) >= pathlen || strlen(colon + 1) >= symlen)
	{
		snprintf(err, errlen, "entry '%s' is too long", entry);
		return false;
	}
	memcpy(path, rest, (size_t) (colon - rest));
	path[colon - rest] = '\0';
	snprintf(symbol, symlen, "%s", colon + 1);
	if (path[0] != '/')
	{
		snprintf(err, errlen, "the file of entry '%s' must be an absolute path", entry);
		return false;
	}
	if (!(isalpha((unsigned char) symbol[0]) || symbol[0] == '_'))
	{
		snprintf(err, errlen, "'%s' is not a %s name", symbol, *kind == KB_EXT_PYTHON ? "function" : "symbol");
		return false;
	}
	for (const char *p = symbol; *p; p++)
		if (!(isalnum((unsigned char) *p) || *p == '_'))
		{
			snprintf(err, errlen, "'%s' is not a %s name", symbol, *kind == KB_EXT_PYTHON ? "function" : "symbol");
			return false;
		}
	return true;
}

void
kb_ext_source_free(kb_ext_source *src)
{
	free(src->bytes);
	memset(src, 0, sizeof(*src));
}

/* Read all of fd (a regular file, fstat'd by the caller) into src. */
static bool
read_all(int fd, const struct stat *sb, const char *path, kb_ext_source *src, char *err, size_t errlen)
{
	size_t		n = 0,
				cap;

	if ((size_t) sb->st_size > MAX_SOURCE_BYTES)
	{
		snprintf(err, errlen, "%s is larger than 1 GiB", path);
		return false;
	}
	cap = (size_t) sb->st_size + 1;
	src->bytes = malloc(cap);
	if (!src->bytes)
	{
		snprintf(err, errlen, "out of host memory reading %s", path);
		return false;
	}
	for (;;)
	{
		ssize_t		r;

		if (n == cap)
		{
			/* it grew while being read: read what is there, up to the limit */
			unsigned char *b = cap < MAX_SOURCE_BYTES ? realloc(src->bytes, cap * 2) : NULL;

			if (!b)
			{
				snprintf(err, errlen, "cannot read %s: it grows while it is read", path);
				return false;
			}
			src->bytes = b;
			cap *= 2;
		}
		r = read(fd, src->bytes + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
		{
			snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
			return false;
		}
		if (r == 0)
			break;
		n += (size_t) r;
	}
	if (n == 0)
	{
		snprintf(err, errlen, "%s is empty", path);
		return false;
	}
	src->len = n;
	ki_sha256_hex(src->bytes, n, src->digest);
	return true;
}

/*
 * Open path from "/" without following a symbolic link anywhere; the fd of
 * the file, or -1 with what is wrong (which component) in err.
 */
static int
open_no_links(const char *path, char *err, size_t errlen)
{
	char		buf[1100];
	char	   *comp,
			   *next;
	int			dirfd;

	if (strlen(path) >= sizeof(buf))
	{
		snprintf(err, errlen, "the path %s is too long", path);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", path);
	dirfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
	{
		snprintf(err, errlen, "cannot open /: %s", strerror(errno));
		return -1;
	}
	comp = buf + 1;
	for (;;)
	{
		struct stat sb;
		bool		last;
		int			fd;

		next = strchr(comp, '/');
		last = next == NULL;
		if (next)
			*next = '\0';
		if (comp[0] == '\0' || strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0)
		{
			snprintf(err, errlen, "the path %s is not in its resolved form (no '.', '..' or '//')", path);
			close(dirfd);
			return -1;
		}
		/* say which component is a link; the open below refuses one that becomes a link meanwhile */
		if (fstatat(dirfd, comp, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode))
		{
			snprintf(err, errlen, "%s is a symbolic link now (a registered file is reached without one)", buf);
			close(dirfd);
			return -1;
		}
		fd = last ? openat(dirfd, comp, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
			: openat(dirfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
		{
			int			e = errno;

			if (e == ELOOP || (!last && e == ENOTDIR && fstatat(dirfd, comp, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
								S_ISLNK(sb.st_mode)))
				snprintf(err, errlen, "%s is a symbolic link now (a registered file is reached without one)", buf);
			else
				snprintf(err, errlen, "cannot open %s: %s", buf, strerror(e));
			close(dirfd);
			return -1;
		}
		close(dirfd);
		if (last)
			return fd;
		dirfd = fd;
		*next = '/';
		comp = next + 1;
	}
}

bool
kb_ext_read_source(const char *path, const char *directory, const char *expected, kb_ext_source *src,
				   char *err, size_t errlen)
{
	struct stat sb;
	int			fd;
	bool		ok;

	memset(src, 0, sizeof(*src));
	if (directory)
	{
		size_t		n = strlen(directory);

		while (n > 1 && directory[n - 1] == '/')
			n--;
		if (directory[0] != '/')
		{
			snprintf(err, errlen, "kernelindex.implementation_directory is not set: registered code does not run");
			return false;
		}
		if (strncmp(path, directory, n) != 0 || path[n] != '/')
		{
			snprintf(err, errlen, "%s is not under kernelindex.implementation_directory (%.*s) now", path, (int) n,
					 directory);
			return false;
		}
		if (expected && strncmp(expected, "sha256:", 7) != 0)
		{
			snprintf(err, errlen, "no content digest was recorded for %s when it was registered", path);
			return false;
		}
		fd = open_no_links(path, err, errlen);
	}
	else
	{
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
	}
	if (fd < 0)
		return false;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
	{
		snprintf(err, errlen, "%s is not a regular file", path);
		close(fd);
		return false;
	}
	ok = read_all(fd, &sb, path, src, err, errlen);
	close(fd);
	if (ok && expected && strcmp(expected, src->digest) != 0)
	{
		snprintf(err, errlen, "the content of %s changed since it was registered (%s registered, %s now)", path,
				 expected, src->digest);
		ok = false;
	}
	if (!ok)
		kb_ext_source_free(src);
	return ok;
}

/* A sealed memfd holding the verified bytes (executable: a library is mapped from it), or -1. */
int
kb_ext_source_memfd(const kb_ext_source *src, const char *name, char *err, size_t errlen)
{
	int			fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);

	if (fd < 0 && errno == EINVAL)	/* a kernel before 6.3 knows no MFD_EXEC */
		fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
	{
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		return -1;
	}
	for (size_t off = 0; off < src->len;)
	{
		ssize_t		w = write(fd, src->bytes + off, src->len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
		{
			snprintf(err, errlen, "cannot copy the implementation into a memfd: %s", strerror(errno));
			close(fd);
			return -1;
		}
		off += (size_t) w;
	}
	/* nothing, not even the child, changes what was verified */
	(void) fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	if (lseek(fd, 0, SEEK_SET) != 0)
	{
		snprintf(err, errlen, "lseek: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The verified source of x's entry, read now (when the child backend starts); a failure
 * names the implementation and what changed.
 */
bool
kb_ext_load_source(kb_backend *be, char *path, size_t pathlen, char *symbol, size_t symlen)
{
	kb_ext	   *x = be->ext;
	int			kind;
	char		why[900];

	if (!kb_ext_split_entry(x->cs.ext_entry, &kind, path, pathlen, symbol, symlen, be->err, sizeof(be->err)))
		return false;
	kb_ext_source_free(&x->src);
	if (!kb_ext_read_source(path, x->req->entry_directory, x->req->entry_digest, &x->src, why, sizeof(why)))
	{
		kb_ext_source_error(&x->cs, x->req, why, be->err, sizeof(be->err));
		return false;
	}
	return true;
}

void
kb_ext_source_error(const kb_case *cs, const kb_request *req, const char *why, char *err, size_t errlen)
{
	if (req && req->entry_directory)
		snprintf(err, errlen, "registered implementation '%s' does not run: %s; if the change is intended, "
				 "register it again (kbench_register_implementation)", kb_ext_label(cs), why);
	else
		snprintf(err, errlen, "%s", why);
}
