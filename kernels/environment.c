/*
 * environment.c: the ExecutionEnvironment of a run, read from the device
 * itself (CUDA device properties, NVML) or from the host (/proc/cpuinfo,
 * uname) for cpu runs.  Only members the schema has; what has no member
 * (SM count, clocks) goes into each run's sourceNative.metrics instead.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kb_int.h"
#include "ki_json.h"

/* Value of the first "key : value" line of a /proc-style file. */
static bool
read_field(const char *file, const char *key, char *out, size_t len)
{
	FILE	   *f = fopen(file, "r");
	char		line[1024];
	size_t		klen = strlen(key);
	bool		found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
	{
		if (strncmp(line, key, klen) == 0 && (line[klen] == ' ' || line[klen] == '\t' || line[klen] == ':' || line[klen] == '='))
		{
			char	   *v = line + klen;
			size_t		n;

			while (*v == ' ' || *v == '\t' || *v == ':' || *v == '=' || *v == '"')
				v++;
			n = strlen(v);
			while (n && (v[n - 1] == '\n' || v[n - 1] == '"' || v[n - 1] == ' '))
				v[--n] = '\0';
			snprintf(out, len, "%s", v);
			found = true;
			break;
		}
	}
	fclose(f);
	return found;
}

/* Lower-case token: [a-z][a-z0-9_]*, other characters become sepch (kb_slug); else "unknown". */
static void
tokenize(const char *in, char *out, size_t len, char sepch)
{
	kb_slug(in, out, len, sepch);
	if (!out[0] || !isalpha((unsigned char) out[0]))
		snprintf(out, len, "unknown");
}

static void
common_software(ki_jw *w)
{
	struct utsname u;
	char		os[256];

	if (read_field("/etc/os-release", "PRETTY_NAME", os, sizeof(os)))
		ki_jw_kstr(w, "operatingSystem", os);
	if (uname(&u) == 0)
		ki_jw_kstr(w, "kernel", u.release);
}

static void
host_compiler(char *out, size_t len)
{
#if defined(__clang__)
	snprintf(out, len, "clang %s", __clang_version__);
#elif defined(__GNUC__)
	snprintf(out, len, "gcc %d.%d.%d", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
	snprintf(out, len, "cc");
#endif
}

/* "13.0" from 13000. */
static void
cuda_version(int v, char *out, size_t len)
{
	snprintf(out, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

char *
kb_environment_text(const kb_backend *be)
{
	kb_text		t;
	ki_jw	   *w = &t.w;
	char		vendor[64] = "unknown";
	char		product[256] = "";
	char		arch[64];
	char		name[200];
	char		slug[128];
	char		title[256];
	char		comp[128];
	struct utsname u;
	long		pages = sysconf(_SC_PHYS_PAGES);
	long		psize = sysconf(_SC_PAGESIZE);

	if (uname(&u) != 0)
		snprintf(u.machine, sizeof(u.machine), "unknown");
	host_compiler(comp, sizeof(comp));
	if (be->cuda)
	{
		snprintf(vendor, sizeof(vendor), "nvidia");
		snprintf(product, sizeof(product), "%s", be->info.name);
		snprintf(arch, sizeof(arch), "sm_%d%d", be->info.cc_major, be->info.cc_minor);
	}
	else
	{
		char		v[128];

		if (read_field("/proc/cpuinfo", "vendor_id", v, sizeof(v)))
		{
			if (strcmp(v, "GenuineIntel") == 0)
				snprintf(vendor, sizeof(vendor), "intel");
			else if (strcmp(v, "AuthenticAMD") == 0)
				snprintf(vendor, sizeof(vendor), "amd");
			else
				tokenize(v, vendor, sizeof(vendor), '_');
		}
		else if (read_field("/proc/cpuinfo", "CPU implementer", v, sizeof(v)))
			snprintf(vendor, sizeof(vendor), "%s", strcmp(v, "0x41") == 0 ? "arm" : "unknown");
		if (!read_field("/proc/cpuinfo", "model name", product, sizeof(product)) &&
			!read_field("/proc/cpuinfo", "Model name", product, sizeof(product)) &&
			!read_field("/proc/cpuinfo", "Hardware", product, sizeof(product)))
			snprintf(product, sizeof(product), "%s processor", u.machine);
		tokenize(u.machine, arch, sizeof(arch), '_');
	}
	tokenize(product, slug, sizeof(slug), '-');
	snprintf(name, sizeof(name), "kbench-%s-%s", be->cuda ? "cuda" : "cpu", slug);
	snprintf(title, sizeof(title), "kbench host \xc2\xb7 %s", product);

	kb_text_open(&t);
	ki_jw_manifest(w, "ExecutionEnvironment", name, title);
	ki_jw_spec(w);
	ki_jw_key(w, "hardware");
	ki_jw_obj(w);
	ki_jw_kstr(w, "vendor", vendor);
	ki_jw_kstr(w, "product", product);
	ki_jw_kstr(w, "architecture", arch);
	if (be->cuda)
		ki_jw_kint(w, "memoryBytes", be->info.total_mem);
	else if (pages > 0 && psize > 0)
		ki_jw_kint(w, "memoryBytes", (int64_t) pages * psize);
	ki_jw_kint(w, "count", 1);
	ki_jw_end_obj(w);
	ki_jw_key(w, "software");
	ki_jw_obj(w);
	common_software(w);
	if (be->cuda)
	{
		char		drv[96];
		char		ver[32];
		char		full[200];

		if (!kb_nvml_driver_version(drv, sizeof(drv)))
		{
			cuda_version(be->info.driver_version, ver, sizeof(ver));
			snprintf(drv, sizeof(drv), "CUDA driver API %s", ver);
		}
		ki_jw_kstr(w, "driver", drv);
		cuda_version(be->info.runtime_version, ver, sizeof(ver));
		ki_jw_kstr(w, "cudaToolkit", ver);
		snprintf(full, sizeof(full), "%s; %s", be->info.compiler, comp);
		ki_jw_kstr(w, "compiler", full);
		ki_jw_key(w, "libraries");
		ki_jw_obj(w);
		snprintf(ver, sizeof(ver), "%d.%d.%d", be->info.cublaslt_version / 10000,
				 (be->info.cublaslt_version / 100) % 100, be->info.cublaslt_version % 100);
		ki_jw_kstr(w, "cublaslt", ver);
		ki_jw_end_obj(w);
	}
	else
		ki_jw_kstr(w, "compiler", comp);
	ki_jw_end_obj(w);
	if (be->cuda)
	{
		ki_jw_key(w, "settings");
		ki_jw_obj(w);
		ki_jw_key(w, "eccEnabled");
		ki_jw_bool(w, be->info.ecc != 0);
		ki_jw_end_obj(w);
	}
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	return kb_text_take(&t);
}
