/*
 * manifest.c: kinds, the identity rules beyond the schemas, normalization
 * and digests of kernelindex.dev/v1alpha1 manifests (IDENTITY.md).
 *
 * The schemas (schema.c) check structure.  The rules they cannot express
 * live here, each with its own rule name in errors:
 *   https                     repository/homepage members and
 *                             metadata.sourceRefs[].url are https URLs
 *   axis_value                a constant OperationSpec axis has a value
 *   axis_expression           a derived OperationSpec axis has an expression
 *   argument_kind             an argument is exactly one of tensor or scalar
 *   latency_central           BenchmarkRun timing.latencyNs has median or mean
 *   duration (schema.c)       a duration string is a whole number of ns
 * Normalization: durations become integer nanoseconds (during validation)
 * and the set-like lists of ImplementationRevision spec.support are sorted
 * by UTF-16 code units and deduplicated.
 */
#include "ki_schema.h"

#include <stdlib.h>
#include <string.h>

static const char *const kind_names[KI_KIND_COUNT] = {
	"OperationSpec",
	"WorkloadCase",
	"WorkloadSuite",
	"SoftwareProject",
	"ImplementationRevision",
	"BenchmarkProtocol",
	"ExecutionEnvironment",
	"BenchmarkRun",
	"ModelRevision",
	"ServingStackRevision",
	"ServingConfiguration",
	"ServingWorkload",
	"ServingRun",
};

/* The name of a kind. */
const char *
ki_kind_name(ki_kind k)
{
	if (k < 0 || k >= KI_KIND_COUNT)
		return "unknown";
	return kind_names[k];
}

/* The kind of a name, or KI_KIND_UNKNOWN. */
ki_kind
ki_kind_from_name(const char *s, size_t len)
{
	int			k;

	for (k = 0; k < KI_KIND_COUNT; k++)
		if (strlen(kind_names[k]) == len && memcmp(kind_names[k], s, len) == 0)
			return (ki_kind) k;
	return KI_KIND_UNKNOWN;
}

static bool
ascii_ieq(const char *a, const char *b, size_t n)
{
	size_t		i;

	for (i = 0; i < n; i++)
	{
		char		x = a[i];

		if (x >= 'A' && x <= 'Z')
			x = (char) (x - 'A' + 'a');
		if (x != b[i])
			return false;
	}
	return true;
}

/*
 * An https URL as the WHATWG URL parser would accept it with protocol
 * "https:": surrounding C0 controls and spaces ignored, tabs and newlines
 * removed, scheme case-insensitive, a non-empty host without forbidden
 * host code points, an optional numeric port no larger than 65535.
 */
static bool
is_https_url(const char *s, size_t n)
{
	char		buf[2048];
	size_t		len = 0;
	size_t		i;
	size_t		host_start,
				host_end,
				at;
	const char *h;
	size_t		hl;

	while (n > 0 && (unsigned char) s[0] <= 0x20)
	{
		s++;
		n--;
	}
	while (n > 0 && (unsigned char) s[n - 1] <= 0x20)
		n--;
	if (n >= sizeof(buf))
		return false;
	for (i = 0; i < n; i++)
		if (s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
			buf[len++] = s[i];
	if (len < 6 || !ascii_ieq(buf, "https:", 6))
		return false;
	i = 6;
	while (i < len && (buf[i] == '/' || buf[i] == '\\'))
		i++;
	host_start = i;
	while (i < len && buf[i] != '/' && buf[i] != '\\' && buf[i] != '?' && buf[i] != '#')
		i++;
	host_end = i;
	/* userinfo ends at the last '@' of the authority */
	for (at = host_end; at > host_start; at--)
		if (buf[at - 1] == '@')
			break;
	if (at > host_start)
		host_start = at;
	h = buf + host_start;
	hl = host_end - host_start;
	if (hl > 0 && h[0] == '[')
	{
		const char *close = memchr(h, ']', hl);

		if (close == NULL || close == h + 1)
			return false;
		i = (size_t) (close - h) + 1;
	}
	else
	{
		for (i = 0; i < hl && h[i] != ':'; i++)
		{
			unsigned char c = (unsigned char) h[i];

			if (c <= 0x20 || c == 0x7F || strchr("#%/<>?@[\\]^|", c) != NULL)
				return false;
		}
		if (i == 0)
			return false;
	}
	if (i < hl)
	{
		long		port = 0;
		size_t		j;

		if (h[i] != ':')
			return false;
		for (j = i + 1; j < hl; j++)
		{
			if (h[j] < '0' || h[j] > '9')
				return false;
			port = port * 10 + (h[j] - '0');
			if (port > 65535)
				return false;
		}
	}
	return true;
}

static void
rule_error(ki_errors *errs, ki_buf *path, const char *rule, const char *msg)
{
	ki_errors_add(errs, KI_ERR_INVALID, ki_buf_cstr(path), rule, -1, "%s", msg);
}

/* https checks on every string member named repository or homepage. */
static void
check_urls(const ki_value *v, const ki_path *path, ki_errors *errs)
{
	size_t		i;

	if (v->type == KI_ARRAY)
	{
		for (i = 0; i < v->u.arr.count; i++)
		{
			ki_path		child = {path, NULL, 0, i};

			check_urls(v->u.arr.items[i], &child, errs);
		}
	}
	else if (v->type == KI_OBJECT)
	{
		for (i = 0; i < v->u.obj.count; i++)
		{
			const ki_member *m = &v->u.obj.members[i];
			ki_path		child = {path, m->key.ptr, m->key.len, 0};

			if (m->value->type == KI_STRING &&
				((m->key.len == 10 && memcmp(m->key.ptr, "repository", 10) == 0) ||
				 (m->key.len == 8 && memcmp(m->key.ptr, "homepage", 8) == 0)))
			{
				if (!is_https_url(m->value->u.str.ptr, m->value->u.str.len))
					ki_errors_add(errs, KI_ERR_INVALID, ki_path_render(errs->arena, &child), "https", -1,
								  "expected an https URL");
			}
			else if (m->value->type == KI_OBJECT || m->value->type == KI_ARRAY)
				check_urls(m->value, &child, errs);
		}
	}
}

static void
check_source_refs(const ki_value *doc, ki_buf *path, ki_errors *errs)
{
	const ki_value *refs = ki_get(ki_get(doc, "metadata"), "sourceRefs");
	size_t		i;

	if (refs == NULL || refs->type != KI_ARRAY)
		return;
	for (i = 0; i < refs->u.arr.count; i++)
	{
		const ki_value *url = ki_get(refs->u.arr.items[i], "url");

		if (url && url->type == KI_STRING && !is_https_url(url->u.str.ptr, url->u.str.len))
		{
			path->len = 0;
			ki_buf_puts(path, "metadata.sourceRefs");
			ki_path_index(path, i);
			ki_buf_puts(path, ".url");
			rule_error(errs, path, "https", "expected an https URL");
		}
	}
	path->len = 0;
}

static bool
str_eq(const ki_value *v, const char *lit)
{
	return v && v->type == KI_STRING && v->u.str.len == strlen(lit) &&
		memcmp(v->u.str.ptr, lit, v->u.str.len) == 0;
}

static void
check_operation(const ki_value *spec, ki_buf *path, ki_errors *errs)
{
	const ki_value *axes = ki_get(spec, "axes");
	const char *lists[] = {"inputs", "outputs"};
	size_t		i;
	int			l;

	if (axes && axes->type == KI_OBJECT)
		for (i = 0; i < axes->u.obj.count; i++)
		{
			const ki_member *m = &axes->u.obj.members[i];
			const ki_value *role = ki_get(m->value, "role");

			path->len = 0;
			ki_buf_puts(path, "spec.axes");
			ki_path_key(path, m->key.ptr, m->key.len);
			if (str_eq(role, "constant") && ki_get(m->value, "value") == NULL)
				rule_error(errs, path, "axis_value", "a constant axis requires a value");
			if (str_eq(role, "derived") && ki_get(m->value, "expression") == NULL)
				rule_error(errs, path, "axis_expression", "a derived axis requires an expression");
		}
	for (l = 0; l < 2; l++)
	{
		const ki_value *args = ki_get(spec, lists[l]);

		if (args == NULL || args->type != KI_ARRAY)
			continue;
		for (i = 0; i < args->u.arr.count; i++)
		{
			const ki_value *a = args->u.arr.items[i];

			if (a->type != KI_OBJECT)
				continue;
			if ((ki_get(a, "tensor") == NULL) == (ki_get(a, "scalar") == NULL))
			{
				path->len = 0;
				ki_buf_puts(path, "spec.");
				ki_buf_puts(path, lists[l]);
				ki_path_index(path, i);
				rule_error(errs, path, "argument_kind", "an argument is exactly one of tensor or scalar");
			}
		}
	}
	path->len = 0;
}

static void
check_run(const ki_value *spec, ki_buf *path, ki_errors *errs)
{
	const ki_value *lat = ki_get(ki_get(spec, "timing"), "latencyNs");

	if (lat && lat->type == KI_OBJECT && ki_get(lat, "median") == NULL &&
		ki_get(lat, "mean") == NULL)
	{
		path->len = 0;
		ki_buf_puts(path, "spec.timing.latencyNs");
		rule_error(errs, path, "latency_central", "latencyNs requires median or mean");
	}
	path->len = 0;
}

static int
value_str_cmp(const void *x, const void *y)
{
	const ki_value *a = *(ki_value * const *) x;
	const ki_value *b = *(ki_value * const *) y;

	return ki_utf16_cmp(a->u.str.ptr, a->u.str.len, b->u.str.ptr, b->u.str.len);
}

/* Sort a list of strings by UTF-16 code units and drop duplicates. */
static void
sort_set(ki_value *list)
{
	size_t		i,
				n = 0;

	if (list == NULL || list->type != KI_ARRAY || list->u.arr.count < 2)
		return;
	for (i = 0; i < list->u.arr.count; i++)
		if (list->u.arr.items[i]->type != KI_STRING)
			return;
	qsort(list->u.arr.items, list->u.arr.count, sizeof(ki_value *), value_str_cmp);
	for (i = 0; i < list->u.arr.count; i++)
		if (n == 0 || value_str_cmp(&list->u.arr.items[n - 1], &list->u.arr.items[i]) != 0)
			list->u.arr.items[n++] = list->u.arr.items[i];
	list->u.arr.count = n;
}

/* Validate and normalize a manifest in place (see ki_json.h). */
ki_value *
ki_manifest_normalize(ki_arena *a, ki_value *doc, ki_kind *kind_out, ki_errors *errs)
{
	const ki_value *kindv;
	ki_kind		kind;
	const sch_node *schema;
	const char *compile_error = NULL;
	int			before = errs->count;
	ki_buf		path;

	*kind_out = KI_KIND_UNKNOWN;
	ki_buf_init(&path, a, 128);
	if (doc == NULL || doc->type != KI_OBJECT)
	{
		ki_errors_add(errs, KI_ERR_INVALID, "", "type", -1, "a manifest must be a JSON object");
		return NULL;
	}
	kindv = ki_get(doc, "kind");
	kind = kindv && kindv->type == KI_STRING ?
		ki_kind_from_name(kindv->u.str.ptr, kindv->u.str.len) : KI_KIND_UNKNOWN;
	if (kind == KI_KIND_UNKNOWN)
	{
		if (kindv == NULL)
			ki_errors_add(errs, KI_ERR_INVALID, "kind", "required", -1, "missing required member");
		else
			ki_errors_add(errs, KI_ERR_INVALID, "kind", "kind", -1,
						  "unknown manifest kind; expected one of OperationSpec, WorkloadCase, "
						  "WorkloadSuite, SoftwareProject, ImplementationRevision, "
						  "BenchmarkProtocol, ExecutionEnvironment, BenchmarkRun, ModelRevision, "
						  "ServingStackRevision, ServingConfiguration, ServingWorkload, ServingRun");
		return NULL;
	}
	*kind_out = kind;
	schema = ki_schema_for(kind, &compile_error);
	if (schema == NULL)
	{
		ki_errors_add(errs, KI_ERR_INVALID, "", "schema", -1,
					  "the schema of %s failed to compile: %s", ki_kind_name(kind),
					  compile_error ? compile_error : "unknown error");
		return NULL;
	}
	ki_schema_validate(schema, doc, NULL, errs);
	check_urls(doc, NULL, errs);
	path.len = 0;
	check_source_refs(doc, &path, errs);
	if (kind == KI_KIND_OPERATION_SPEC)
		check_operation(ki_get(doc, "spec"), &path, errs);
	else if (kind == KI_KIND_BENCHMARK_RUN)
		check_run(ki_get(doc, "spec"), &path, errs);
	if (a->failed)
	{
		ki_errors_add(errs, KI_ERR_NOMEM, "", "memory", -1, "out of memory");
		return NULL;
	}
	if (errs->count > before)
		return NULL;

	if (kind == KI_KIND_IMPLEMENTATION_REVISION)
	{
		ki_value   *support = ki_get(ki_get(doc, "spec"), "support");

		sort_set(ki_get(support, "hardwareArchitectures"));
		sort_set(ki_get(support, "productsTested"));
		sort_set(ki_get(support, "axes"));
		sort_set(ki_get(support, "dtypes"));
		sort_set(ki_get(support, "layouts"));
	}
	return doc;
}

/* The identity body {apiVersion, kind, spec} of a normalized manifest. */
ki_value *
ki_identity_body(ki_arena *a, const ki_value *normalized)
{
	static const char *const names[] = {"apiVersion", "kind", "spec"};
	ki_value   *body = ki_new_value(a, KI_OBJECT);
	ki_member  *m = ki_alloc(a, 3 * sizeof(ki_member));
	size_t		n = 0;
	int			i;

	if (body == NULL || m == NULL)
		return NULL;
	for (i = 0; i < 3; i++)
	{
		ki_value   *v = ki_get(normalized, names[i]);

		if (v == NULL)
			continue;
		m[n].key.ptr = names[i];
		m[n].key.len = strlen(names[i]);
		m[n].key.plain = true;
		m[n].value = v;
		n++;
	}
	body->u.obj.members = m;
	body->u.obj.count = n;
	return body;
}

/* Digest of a normalized manifest's identity body. */
void
ki_identity_digest(ki_arena *a, const ki_value *normalized, char out[KI_DIGEST_LEN + 1])
{
	ki_buf		buf;
	ki_value   *body = ki_identity_body(a, normalized);

	ki_buf_init(&buf, a, 1024);
	if (body)
		ki_canonical(body, &buf);
	ki_sha256_hex(buf.data, buf.len, out);
}

/* Parse, validate, normalize and digest JSON text. */
bool
ki_digest_text(ki_arena *a, const char *text, size_t len,
			   char out[KI_DIGEST_LEN + 1], ki_errors *errs)
{
	ki_value   *doc = ki_parse(a, text, len, errs);
	ki_kind		kind;

	if (doc == NULL)
		return false;
	if (ki_manifest_normalize(a, doc, &kind, errs) == NULL)
		return false;
	ki_identity_digest(a, doc, out);
	return true;
}

static void
prefix_errors(ki_errors *errs, int from, const char *prefix)
{
	int			i;

	for (i = from; i < errs->count; i++)
	{
		ki_buf		b;
		const char *p = errs->items[i].path;

		ki_buf_init(&b, errs->arena, strlen(prefix) + strlen(p) + 2);
		ki_buf_puts(&b, prefix);
		if (p[0] != '\0' && p[0] != '[')
			ki_buf_putc(&b, '.');
		ki_buf_puts(&b, p);
		errs->items[i].path = ki_buf_cstr(&b);
	}
}

/* Validate a composite {run, protocol, environment} document. */
bool
ki_composite_validate(ki_arena *a, ki_value *doc, ki_composite *out, ki_errors *errs)
{
	static const char *const roles[3] = {"run", "protocol", "environment"};
	static const ki_kind kinds[3] = {KI_KIND_BENCHMARK_RUN, KI_KIND_BENCHMARK_PROTOCOL,
	KI_KIND_EXECUTION_ENVIRONMENT};
	ki_value   *parts[3] = {NULL, NULL, NULL};
	char	   *digests[3] = {out->run_digest, out->protocol_digest, out->environment_digest};
	int			before = errs->count;
	size_t		i;
	int			r;

	memset(out, 0, sizeof(*out));
	if (doc == NULL || doc->type != KI_OBJECT)
	{
		ki_errors_add(errs, KI_ERR_INVALID, "", "type", -1,
					  "a run document must be a JSON object with members run, protocol and environment");
		return false;
	}
	for (i = 0; i < doc->u.obj.count; i++)
	{
		const ki_member *m = &doc->u.obj.members[i];
		bool		known = false;

		for (r = 0; r < 3; r++)
			if (m->key.len == strlen(roles[r]) && memcmp(m->key.ptr, roles[r], m->key.len) == 0)
			{
				parts[r] = m->value;
				known = true;
			}
		if (!known)
		{
			ki_buf		b;

			ki_buf_init(&b, a, 64);
			ki_path_key(&b, m->key.ptr, m->key.len);
			ki_errors_add(errs, KI_ERR_INVALID, ki_buf_cstr(&b), "additionalProperties", -1,
						  "unknown member; a run document has run, protocol and environment");
		}
	}
	for (r = 0; r < 3; r++)
	{
		int			from = errs->count;
		ki_kind		kind;

		if (parts[r] == NULL)
		{
			ki_errors_add(errs, KI_ERR_INVALID, roles[r], "required", -1, "missing required member");
			continue;
		}
		if (ki_manifest_normalize(a, parts[r], &kind, errs) == NULL)
		{
			prefix_errors(errs, from, roles[r]);
			parts[r] = NULL;
			continue;
		}
		if (kind != kinds[r])
		{
			ki_errors_add(errs, KI_ERR_INVALID, "", "kind", -1,
						  "expected a %s manifest, found %s", ki_kind_name(kinds[r]), ki_kind_name(kind));
			prefix_errors(errs, errs->count - 1, roles[r]);
			parts[r] = NULL;
			continue;
		}
		ki_identity_digest(a, parts[r], digests[r]);
	}
	if (parts[0] && parts[1])
	{
		const ki_value *named = ki_get(ki_get(parts[0], "spec"), "protocolDigest");

		if (!str_eq(named, out->protocol_digest))
			ki_errors_add(errs, KI_ERR_INVALID, "run.spec.protocolDigest", "protocol_digest", -1,
						  "the run names %.*s but the protocol digests to %s",
						  named && named->type == KI_STRING ? (int) named->u.str.len : 7,
						  named && named->type == KI_STRING ? named->u.str.ptr : "nothing",
						  out->protocol_digest);
	}
	if (parts[0] && parts[2])
	{
		const ki_value *named = ki_get(ki_get(parts[0], "spec"), "environmentDigest");

		if (!str_eq(named, out->environment_digest))
			ki_errors_add(errs, KI_ERR_INVALID, "run.spec.environmentDigest", "environment_digest", -1,
						  "the run names %.*s but the environment digests to %s",
						  named && named->type == KI_STRING ? (int) named->u.str.len : 7,
						  named && named->type == KI_STRING ? named->u.str.ptr : "nothing",
						  out->environment_digest);
	}
	out->run = parts[0];
	out->protocol = parts[1];
	out->environment = parts[2];
	return errs->count == before;
}
