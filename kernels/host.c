/*
 * host.c: what every part of libkbench asks of the host: its monotonic
 * clock, and the directory of the program (or library) this code lies in,
 * where its companions are found (libkbench_cuda.so, the python harness).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kb_int.h"

int64_t
kb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool
kb_object_dir(const void *addr, char *out, size_t outlen)
{
	Dl_info		info;
	char		real[PATH_MAX];
	char	   *slash;
	ssize_t		n;

	if (!dladdr(addr, &info) || !info.dli_fname)
		return false;
	/*
	 * For the main program glibc gives argv[0]: a bare name when kbench was found on PATH.
	 * The kernel knows the program's real path.
	 */
	if (strchr(info.dli_fname, '/') == NULL)
	{
		n = readlink("/proc/self/exe", real, sizeof(real) - 1);
		if (n <= 0)
			return false;
		real[n] = '\0';
	}
	else if (!realpath(info.dli_fname, real))
		snprintf(real, sizeof(real), "%s", info.dli_fname);
	slash = strrchr(real, '/');
	if (!slash)
		return false;
	*slash = '\0';
	snprintf(out, outlen, "%s", slash == real ? "/" : real);
	return true;
}

