/*
 * cache.c: how much a cache flush must sweep.
 *
 * The timing protocol clears a buffer before every timed call, outside the
 * timed region, so that a call finds its inputs in memory and not in a cache
 * the previous call warmed.  The buffer must be larger than the cache it
 * evicts: on the CPU twice the largest cache the first CPU sees (a
 * buffer of one cache's size leaves part of the call's data in place under
 * a not-quite-LRU policy; twice is NVBench's and common practice's margin),
 * read from sysfs (what a VM or container is given), else sysconf, else an
 * assumed 16 MiB.  A GPU keeps 256 MiB, more than any L2 so far.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kb_int.h"

#define GPU_FLUSH_BYTES ((int64_t) 256 << 20)
#define ASSUMED_CACHE_BYTES ((int64_t) 16 << 20)

/* "32768K", "1M", "512" -> bytes; 0 when unreadable. */
static int64_t
parse_size(const char *s)
{
	char	   *end;
	long long	v = strtoll(s, &end, 10);

	if (v <= 0 || end == s)
		return 0;
	if (*end == 'K' || *end == 'k')
		return (int64_t) v << 10;
	if (*end == 'M' || *end == 'm')
		return (int64_t) v << 20;
	if (*end == 'G' || *end == 'g')
		return (int64_t) v << 30;
	return (int64_t) v;
}

static bool
read_line(const char *path, char *buf, size_t len)
{
	FILE	   *f = fopen(path, "r");
	bool		ok;

	if (!f)
		return false;
	ok = fgets(buf, (int) len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\r\n")] = '\0';
	return ok;
}

/* What the files say, read once per process: the flush size is asked for at every request. */
static int64_t cache_bytes;
static const char *cache_source;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static int64_t read_cache_bytes(const char **source);

static void
read_cache_once(void)
{
	cache_bytes = read_cache_bytes(&cache_source);
}

int64_t
kb_cpu_cache_bytes(const char **source)
{
	pthread_once(&cache_once, read_cache_once);
	if (source)
		*source = cache_source;
	return cache_bytes;
}

static int64_t
read_cache_bytes(const char **source)
{
	int64_t		best = 0;
	int			best_level = 0;

	/* the highest-level data or unified cache of cpu0 */
	for (int i = 0; i < 16; i++)
	{
		char		path[128],
					buf[64];
		int			level;
		int64_t		size;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		if (!read_line(path, buf, sizeof(buf)))
			break;
		level = atoi(buf);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		if (!read_line(path, buf, sizeof(buf)) || strcmp(buf, "Instruction") == 0)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		if (!read_line(path, buf, sizeof(buf)) || (size = parse_size(buf)) <= 0)
			continue;
		if (level > best_level || (level == best_level && size > best))
		{
			best_level = level;
			best = size;
		}
	}
	if (best > 0)
	{
		if (source)
			*source = "sysfs";
		return best;
	}
#ifdef _SC_LEVEL3_CACHE_SIZE
	{
		long		l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
		long		l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);

		if (l3 > 0 || l2 > 0)
		{
			if (source)
				*source = "sysconf";
			return l3 > 0 ? (int64_t) l3 : (int64_t) l2;
		}
	}
#endif
	if (source)
		*source = "assumed";
	return ASSUMED_CACHE_BYTES;
}

int64_t
kb_default_flush_bytes(int cuda)
{
	/* the flush is a memset of whole cache lines: round to 64 bytes */
	return cuda ? GPU_FLUSH_BYTES : (KB_CPU_FLUSH_FACTOR * kb_cpu_cache_bytes(NULL) + 63) / 64 * 64;
}
