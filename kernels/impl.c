/*
 * impl.c: implementations other than kbench's own (python, library, the
 * built-in python ones): recognised in a request (kb_ext_parse) and
 * described by an ImplementationRevision manifest.  They run in a child
 * process (backend_child.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "impl_int.h"
#include "ki_json.h"

/* ------------------------------------------------------------ parsing a request */

int
kb_ext_parse(const kb_request *req, kb_case *cs, char *err, size_t errlen)
{
	const char *impl = req->impl;
	char		path[1024],
				symbol[256];
	int			kind;
	kb_impl_id	own;

	if (impl && (kb_impl_resolve(impl, NULL, &own, NULL, 0) != KB_PASSED || own.own))
	{
		if (req->entry)
		{
			snprintf(err, errlen, "an entry names a python or library implementation, not '%s'", impl);
			return -1;
		}
		return 0;
	}
	for (int i = 0; impl && i < kb_builtin_python_count; i++)
		if (strcmp(impl, kb_builtin_python[i]) == 0)
		{
			if (req->entry)
			{
				snprintf(err, errlen, "'%s' is a built-in python implementation; it takes no entry", impl);
				return -1;
			}
			cs->ext = KB_EXT_PYTHON;
			cs->ext_builtin = true;
			cs->ext_name = kb_builtin_python[i];
			return kb_python_check(req, cs, err, errlen) ? 1 : -1;
		}
	if (impl && kb_provider_name(impl))
	{
		const kb_provider *p = kb_provider_for(impl, cs->op->name);

		if (req->entry)
		{
			snprintf(err, errlen, "'%s' is a built-in python implementation; it takes no entry", impl);
			return -1;
		}
		if (!p)
		{
			char		ops[256];

			kb_provider_ops(impl, ops, sizeof(ops));
			snprintf(err, errlen, "implementation '%s' is Liger's provider for %s only; Liger benchmarks no %s with it "
					 "(docs/OPERATIONS.md, \"Liger's other providers\")", impl, ops, cs->op->name);
			return -1;
		}
		cs->ext = KB_EXT_PYTHON;
		cs->ext_builtin = true;
		cs->ext_provider = p;
		cs->ext_name = p->name;
		return kb_python_check(req, cs, err, errlen) ? 1 : -1;
	}
	if (!req->entry)
	{
		if (impl && (strcmp(impl, "python") == 0 || strcmp(impl, "library") == 0))
		{
			snprintf(err, errlen, "implementation '%s' needs an entry (%s)", impl,
					 strcmp(impl, "python") == 0 ? "python:/dir/file.py:function" : "library:/dir/libx.so:symbol");
			return -1;
		}
		return 0;
	}
	if (!kb_ext_split_entry(req->entry, &kind, path, sizeof(path), symbol, sizeof(symbol), err, errlen))
		return -1;
	if (impl && strcmp(impl, "python") != 0 && strcmp(impl, "library") != 0 && !kb_impl_valid_name(impl))
	{
		snprintf(err, errlen, "implementation name '%s' must be lower-case letters, digits, '.', '_' or '-'", impl);
		return -1;
	}
	if (impl && ((strcmp(impl, "python") == 0 && kind != KB_EXT_PYTHON) ||
				 (strcmp(impl, "library") == 0 && kind != KB_EXT_LIBRARY)))
	{
		snprintf(err, errlen, "implementation '%s' does not match entry '%s'", impl, req->entry);
		return -1;
	}
	if (access(path, R_OK) != 0)
	{
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	cs->ext = kind;
	cs->ext_entry = req->entry;
	cs->ext_name = impl && strcmp(impl, "python") != 0 && strcmp(impl, "library") != 0 ? impl : NULL;
	if (kind == KB_EXT_LIBRARY && cs->cuda)
	{
		snprintf(err, errlen, "library implementations run on the cpu device in this version (kbench_impl.h)");
		return -1;
	}
	if (kind == KB_EXT_PYTHON && !kb_python_check(req, cs, err, errlen))
		return -1;
	return 1;
}

/* ------------------------------------------------------------ manifests */

/* The string value of key in a flat JSON object of strings (the child's versions). */
static void
version_of(const char *json, const char *key, char *out, size_t len)
{
	char		pat[80];
	const char *p;
	size_t		n = 0;

	out[0] = '\0';
	if (!json)
		return;
	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	p = strstr(json, pat);
	if (!p)
		return;
	for (p += strlen(pat); *p && *p != '"' && n + 1 < len; p++)
		out[n++] = *p;
	out[n] = '\0';
}

/* sha256 and size of a file (opened once, impl_source.c); false with the reason in err. */
bool
kb_ext_file_digest(const char *path, char digest[72], int64_t *size, char *err, size_t errlen)
{
	kb_ext_source src;

	if (!kb_ext_read_source(path, NULL, NULL, &src, err, errlen))
		return false;
	snprintf(digest, 72, "%s", src.digest);
	*size = (int64_t) src.len;
	kb_ext_source_free(&src);
	return true;
}

/*
 * The ImplementationRevision text of a user's entry, or of a built-in
 * python implementation (path: its file, versions: what the child reported
 * as a JSON object text, or NULL).
 */
static char *
manifest_text(const kb_op *op, int kind, const char *file, const char *digest, int64_t size, const char *symbol,
			  const char *name, const char *version, const char *commit, const char *versions_json,
			  const char *op_digest, const char *shown_path, const char *description)
{
	kb_text		t;
	ki_jw	   *w = &t.w;
	char		title[300];
	const char *base = strrchr(file, '/');

	snprintf(title, sizeof(title), "%s \xc2\xb7 %s (%s)", op->title, name, kind == KB_EXT_PYTHON ? "python" : "C library");
	kb_text_open(&t);
	ki_jw_manifest(w, "ImplementationRevision", name, title);
	if (description)
		ki_jw_kstr(w, "description", description);
	ki_jw_spec(w);
	ki_jw_key(w, "projectRevision");
	ki_jw_obj(w);
	if (version && *version)
		ki_jw_kstr(w, "version", version);
	if (commit && strlen(commit) == 40)
		ki_jw_kstr(w, "commit", commit);
	ki_jw_end_obj(w);
	ki_jw_key(w, "operation");
	ki_jw_obj(w);
	ki_jw_kstr(w, "specDigest", op_digest);
	ki_jw_end_obj(w);
	ki_jw_key(w, "callable");
	ki_jw_obj(w);
	ki_jw_kstr(w, "language", kind == KB_EXT_PYTHON ? "python" : "c");
	ki_jw_kstr(w, "path", shown_path ? shown_path : file);
	ki_jw_kstr(w, "symbol", symbol);
	ki_jw_kstr(w, "interface", kind == KB_EXT_PYTHON ? "kbench_python_v1" : "kbench_impl_v1");
	ki_jw_end_obj(w);
	ki_jw_key(w, "support");
	ki_jw_obj(w);
	ki_jw_key(w, "hardwareArchitectures");
	ki_jw_arr(w);
	ki_jw_end_arr(w);
	ki_jw_key(w, "dtypes");
	ki_jw_arr(w);
	for (int i = 0; i < op->ndtypes; i++)
		ki_jw_str(w, kb_dtype_name(op->dtypes[i]));
	ki_jw_end_arr(w);
	ki_jw_end_obj(w);
	ki_jw_key(w, "source");
	ki_jw_obj(w);
	ki_jw_kstr(w, "contentDigest", digest);
	ki_jw_kstr(w, "fileName", base ? base + 1 : file);
	ki_jw_kint(w, "sizeBytes", size);
	ki_jw_end_obj(w);
	if (versions_json && versions_json[0] == '{' && versions_json[1] != '}')
	{
		/* what the child imported: {"python": "3.11.2", "torch": "1.13.1", ...} */
		char		vname[120];

		snprintf(title, sizeof(title), "python-%s", name);
		kb_slug(title, vname, sizeof(vname), '-');
		ki_jw_key(w, "buildVariants");
		ki_jw_arr(w);
		ki_jw_obj(w);
		ki_jw_kstr(w, "name", vname);
		ki_jw_key(w, "install");
		ki_jw_obj(w);
		ki_jw_kstr(w, "kind", "package");
		ki_jw_end_obj(w);
		ki_jw_key(w, "requirements");
		ki_jw_json(w, versions_json);
		ki_jw_end_obj(w);
		ki_jw_end_arr(w);
	}
	ki_jw_key(w, "licensing");
	ki_jw_obj(w);
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	return kb_text_take(&t);
}

/* Default name of an unregistered entry: "byo-<file>-<symbol>". */
static void
entry_name(const char *path, const char *symbol, char *out, size_t len)
{
	char		raw[600];
	const char *base = strrchr(path, '/');

	snprintf(raw, sizeof(raw), "byo-%.80s-%.80s", base ? base + 1 : path, symbol);
	kb_slug(raw, out, len, '-');
}

/*
 * What the built-in python baselines cannot do on the CPU (issue 29 item 9):
 * in bf16 on the CPU, torch's kernels for these operations miss kbench's
 * derived tolerance (which assumes fp32 arithmetic and one rounding of each
 * output to bf16) by about a bf16 unit in the last place: measured here with
 * torch 1.13 (Debian's python3-torch), huggingface and torch, every pass
 * (layer_norm 4096x4096: ratio 781 of the tolerance; 64x256: above 1 too).
 * Refused when queued or run, with the reason, rather than failing their
 * own check; the others (rms_norm, jsd, megatron_cross_entropy) pass.
 */
static const char *const bf16_cpu_refused[] = {"layer_norm", "distill_jsd_loss"};

kb_status
kb_check_numerics(const kb_case *cs, char *err, size_t errlen)
{
	if (!cs->ext_builtin || cs->cuda || cs->dtype != KB_BF16 || !cs->ext_name || strcmp(cs->ext_name, "liger") == 0)
		return KB_PASSED;
	for (size_t i = 0; i < sizeof(bf16_cpu_refused) / sizeof(bf16_cpu_refused[0]); i++)
		if (strcmp(cs->op->name, bf16_cpu_refused[i]) == 0)
		{
			snprintf(err, errlen, "%s's %s baseline in bf16 on the CPU misses kbench's derived tolerance (torch's CPU "
					 "kernels are off by about one bf16 unit in the last place more than fp32 arithmetic with one rounding "
					 "of each output allows; docs/KERNELS.md, \"bf16 on the CPU\"): run it in fp32 on the CPU, in bf16 on "
					 "a GPU (not measured on a GPU yet), or kbench's own cpu implementation in bf16",
					 cs->op->name, cs->ext_name);
			return KB_INVALID_REQUEST;
		}
	return KB_PASSED;
}

/*
 * The ImplementationRevision of a python file of kbench's own (rel, under
 * kernels/python, found beside the harness): its implementation impl of
 * cs's operation, the versions of lib (and Liger's commit for liger_kernel).
 */
static char *
harness_text(const kb_case *cs, const char *op_digest, const kb_request *req, const char *versions,
			 const char *rel, const char *impl, const char *lib, const char *desc, char *err, size_t errlen)
{
	char		file[1100];
	char		name[200];
	char		symbol[200];
	char		version[120] = "";
	char		commit[48] = "";
	char		digest[72];
	int64_t		size;

	if (!kb_python_harness_file(req, strrchr(rel, '/') + 1, file, sizeof(file), err, errlen))
		return NULL;
	if (!kb_ext_file_digest(file, digest, &size, err, errlen))
		return NULL;
	snprintf(name, sizeof(name), "kbench-python-%s-%s", impl, cs->op->slug);
	snprintf(symbol, sizeof(symbol), "%s.%s", impl, cs->op->name);
	version_of(versions, lib, version, sizeof(version));
	if (strcmp(lib, "liger_kernel") == 0)
		version_of(versions, "liger_kernel_commit", commit, sizeof(commit));
	return manifest_text(cs->op, KB_EXT_PYTHON, file, digest, size, symbol, name, version, commit, versions,
						 op_digest, rel, desc);
}

/*
 * One of Liger's other providers (kb_providers): kbench_providers.py's bytes,
 * named kbench-python-<provider>-<operation slug> with Liger's provider name
 * as it is, its version the library's it needs (torch's where it needs none).
 */
static char *
provider_text(const kb_case *cs, const char *op_digest, const kb_request *req, const char *versions,
			  char *err, size_t errlen)
{
	const kb_provider *p = cs->ext_provider;
	const char *rel = "kernels/python/kbench_providers.py";
	const char *lib = !p->library ? "torch" : strcmp(p->library, "megatron.core") == 0 ? "megatron_core" : p->library;
	char		desc[900];

	snprintf(desc, sizeof(desc), "Liger's provider %s: %s, as Liger-Kernel's benchmark script builds it "
			 "(benchmark/scripts/%s), called from kbench's python harness (%s).", p->name, p->builds, p->script, rel);
	return harness_text(cs, op_digest, req, versions, rel, p->name, lib, desc, err, errlen);
}

char *
kb_ext_implementation_text(const kb_case *cs, const char *op_digest, const kb_request *req,
						   const kb_backend *be, char *err, size_t errlen)
{
	const char *versions = kb_ext_versions(be);

	if (cs->ext_builtin && cs->ext_provider)
		return provider_text(cs, op_digest, req, versions, err, errlen);
	if (cs->ext_builtin)
	{
		/* the operations defined as data have their baselines in their own file (docs/OPERATIONS.md) */
		const char *rel = cs->op->def ? "kernels/python/kbench_builtin_defs.py" : "kernels/python/kbench_builtin.py";
		bool		liger = strcmp(cs->ext_name, "liger") == 0;
		char		desc[600];

		snprintf(desc, sizeof(desc), "%s as Liger-Kernel's benchmark scripts construct it (benchmark/scripts/"
				 "benchmark_%s.py), called from kbench's python harness (%s).",
				 liger ? "Liger-Kernel's module" : "The PyTorch baseline", cs->op->name, rel);
		return harness_text(cs, op_digest, req, versions, rel, cs->ext_name, liger ? "liger_kernel" : "torch", desc,
							err, errlen);
	}
	{
		char		path[1024],
					symbol[256],
					name[300],
					why[900];
		int			kind;
		kb_ext_source src;
		const kb_ext_source *ran = kb_ext_ran_source(be);
		char	   *text;

		if (!kb_ext_split_entry(cs->ext_entry, &kind, path, sizeof(path), symbol, sizeof(symbol), err, errlen))
			return NULL;
		if (cs->ext_name)
			snprintf(name, sizeof(name), "%s", cs->ext_name);
		else
			entry_name(path, symbol, name, sizeof(name));
		/* the digest of the bytes that ran; before the run, of the file as verified now */
		if (!ran && !kb_ext_read_source(path, req ? req->entry_directory : NULL, req ? req->entry_digest : NULL,
										&src, why, sizeof(why)))
		{
			kb_ext_source_error(cs, req, why, err, errlen);
			return NULL;
		}
		text = manifest_text(cs->op, kind, path, ran ? ran->digest : src.digest, (int64_t) (ran ? ran->len : src.len),
							 symbol, name, req ? req->impl_version : NULL, NULL, NULL, op_digest, NULL, NULL);
		if (!ran)
			kb_ext_source_free(&src);
		return text;
	}
}

char *
kb_implementation_manifest(const char *opname, const char *entry, const char *name, const char *version,
						   const char *directory, char digest[72], char *err, size_t errlen)
{
	const kb_op *op = kb_find_op(opname);
	char		path[1024],
				symbol[256],
				opdigest[72],
				defname[300];
	char	   *text,
			   *canon = NULL,
			   *optext;
	int			kind;
	kb_ext_source src;

	if (!op)
	{
		snprintf(err, errlen, "unknown operation '%s'", opname ? opname : "");
		return NULL;
	}
	if (!entry || !kb_ext_split_entry(entry, &kind, path, sizeof(path), symbol, sizeof(symbol), err, errlen))
	{
		if (!entry)
			snprintf(err, errlen, "no entry");
		return NULL;
	}
	if (name && !kb_impl_valid_name(name))
	{
		snprintf(err, errlen, "implementation name '%s' must be lower-case letters, digits, '.', '_' or '-'", name);
		return NULL;
	}
	optext = kb_operation_text(op);
	if (!kb_manifest_finish(optext, &canon, opdigest, err, errlen))
	{
		free(optext);
		return NULL;
	}
	free(optext);
	free(canon);
	canon = NULL;
	if (!name)
		entry_name(path, symbol, defname, sizeof(defname));
	if (!kb_ext_read_source(path, directory, NULL, &src, err, errlen))
		return NULL;
	if (!kb_ext_entry_defined(kind, &src, path, symbol, err, errlen))
	{
		kb_ext_source_free(&src);
		return NULL;
	}
	text = manifest_text(op, kind, path, src.digest, (int64_t) src.len, symbol, name ? name : defname, version,
						 NULL, NULL, opdigest, NULL, NULL);
	kb_ext_source_free(&src);
	if (!text)
		return NULL;
	if (!kb_manifest_finish(text, &canon, digest, err, errlen))
		canon = NULL;
	free(text);
	return canon;
}
