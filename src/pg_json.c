/*
 * pg_json.c: the bridge between the identity core and PostgreSQL values:
 * palloc arenas, json/jsonb/text arguments, jsonb results, and errors.
 */
#include "kernelindex.h"

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include <math.h>

static void *
pg_alloc(void *ctx, size_t size)
{
	(void) ctx;
	return palloc_extended(size, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

/* An arena whose blocks live in the current memory context. */
void
ki_pg_arena_init(ki_arena *a)
{
	ki_arena_init(a, pg_alloc, NULL, NULL);
}

/*
 * The scratch arena of the identity functions: malloc'd blocks kept for the
 * life of the backend and rewound at each call, so a digest costs no
 * allocation from the system.  Only for functions that run no SQL and no
 * user code while they hold it (nothing can re-enter and rewind it under
 * them); an error simply leaves it to the next call's rewind.
 */
ki_arena *
ki_pg_scratch_arena(void)
{
	static ki_arena scratch;
	static bool ready = false;

	if (!ready)
	{
		ki_arena_init_malloc(&scratch);
		ready = true;
	}
	ki_arena_rewind(&scratch);
	return &scratch;
}

/* Convert one jsonb scalar. */
static ki_value *
scalar_to_tree(ki_arena *a, JsonbValue *jv)
{
	ki_value   *v = NULL;

	switch (jv->type)
	{
		case jbvNull:
			v = ki_new_value(a, KI_NULL);
			break;
		case jbvBool:
			v = ki_new_value(a, jv->val.boolean ? KI_TRUE : KI_FALSE);
			break;
		case jbvString:
			v = ki_new_value(a, KI_STRING);
			if (v)
			{
				v->u.str.ptr = jv->val.string.val;
				v->u.str.plain = false;
				v->u.str.len = (size_t) jv->val.string.len;
			}
			break;
		case jbvNumeric:
			{
				/*
				 * The number the text means as a double, read as the JSON
				 * parser reads it (strtod: 1e-400 is 0, as in json and
				 * text), not numeric_float8(), which refuses underflow.
				 */
				char	   *digits = DatumGetCString(DirectFunctionCall1(numeric_out,
																		NumericGetDatum(jv->val.numeric)));
				double		d = strtod(digits, NULL);

				if (isinf(d))
					return NULL;	/* the caller reports it with its path */
				v = ki_new_number(a, d);
				break;
			}
		default:
			elog(ERROR, "unexpected jsonb scalar type %d", (int) jv->type);
	}
	if (v == NULL && jv->type != jbvNumeric)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	return v;
}

typedef struct build_frame
{
	ki_value   *container;
	ki_member  *members;
	ki_value  **items;
	size_t		count;
	size_t		cap;
	JsonbValue	pending_key;
	bool		have_key;
} build_frame;

static void
frame_add(ki_arena *a, build_frame *f, ki_value *v)
{
	if (f->count == f->cap)
	{
		size_t		cap = f->cap ? f->cap * 2 : 8;

		if (f->container->type == KI_OBJECT)
		{
			ki_member  *m = ki_alloc(a, cap * sizeof(ki_member));

			if (m && f->count)
				memcpy(m, f->members, f->count * sizeof(ki_member));
			f->members = m;
		}
		else
		{
			ki_value  **items = ki_alloc(a, cap * sizeof(ki_value *));

			if (items && f->count)
				memcpy(items, f->items, f->count * sizeof(ki_value *));
			f->items = items;
		}
		if (f->members == NULL && f->items == NULL)
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		f->cap = cap;
	}
	if (f->container->type == KI_OBJECT)
	{
		f->members[f->count].key.ptr = f->pending_key.val.string.val;
		f->members[f->count].key.len = (size_t) f->pending_key.val.string.len;
		f->members[f->count].key.plain = false;
		f->members[f->count].value = v;
	}
	else
		f->items[f->count] = v;
	f->count++;
}

/* A tree from a jsonb value. */
ki_value *
ki_jsonb_to_tree(ki_arena *a, Jsonb *jb)
{
	JsonbIterator *it = JsonbIteratorInit(&jb->root);
	JsonbIteratorToken tok;
	JsonbValue	jv;
	build_frame frames[KI_MAX_DEPTH + 2];
	int			depth = -1;
	ki_value   *result = NULL;

	while ((tok = JsonbIteratorNext(&it, &jv, false)) != WJB_DONE)
	{
		switch (tok)
		{
			case WJB_BEGIN_ARRAY:
			case WJB_BEGIN_OBJECT:
				if (tok == WJB_BEGIN_ARRAY && jv.val.array.rawScalar)
					break;		/* a scalar document: its WJB_ELEM follows */
				if (depth + 1 >= KI_MAX_DEPTH)
					ereport(ERROR,
							(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
							 errmsg("json document nests deeper than %d levels", KI_MAX_DEPTH)));
				depth++;
				memset(&frames[depth], 0, sizeof(build_frame));
				frames[depth].container = ki_new_value(a, tok == WJB_BEGIN_ARRAY ? KI_ARRAY : KI_OBJECT);
				if (frames[depth].container == NULL)
					ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
				break;
			case WJB_KEY:
				frames[depth].pending_key = jv;
				break;
			case WJB_VALUE:
			case WJB_ELEM:
				{
					ki_value   *v = scalar_to_tree(a, &jv);

					if (v == NULL)
					{
						/* as the JSON parser says it of the same text */
						ki_buf		path;
						int			d;

						ki_buf_init(&path, a, 64);
						for (d = 0; d <= depth; d++)
						{
							if (frames[d].container->type == KI_OBJECT)
								ki_path_key(&path, frames[d].pending_key.val.string.val,
											(size_t) frames[d].pending_key.val.string.len);
							else
								ki_path_index(&path, frames[d].count);
						}
						ereport(ERROR,
								(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
								 errmsg("invalid JSON at %s: number out of the range of a double (rule number_range)",
										path.len > 0 ? ki_buf_cstr(&path) : "(root)")));
					}
					if (depth < 0)
						result = v;
					else
						frame_add(a, &frames[depth], v);
					break;
				}
			case WJB_END_ARRAY:
			case WJB_END_OBJECT:
				{
					ki_value   *c;

					if (depth < 0)
						break;	/* end of a raw scalar */
					c = frames[depth].container;
					if (c->type == KI_OBJECT)
					{
						c->u.obj.members = frames[depth].members;
						c->u.obj.count = frames[depth].count;
					}
					else
					{
						c->u.arr.items = frames[depth].items;
						c->u.arr.count = frames[depth].count;
					}
					depth--;
					if (depth < 0)
						result = c;
					else
						frame_add(a, &frames[depth], c);
					break;
				}
			default:
				break;
		}
	}
	return result;
}

/* Read a json, jsonb or text argument into a tree. */
ki_value *
ki_pg_arg_tree(FunctionCallInfo fcinfo, int argno, ki_arena *a, ki_errors *errs)
{
	Oid			type = get_fn_expr_argtype(fcinfo->flinfo, argno);

	if (type == JSONBOID)
	{
		Jsonb	   *jb = PG_GETARG_JSONB_P(argno);

		if (VARSIZE_ANY_EXHDR(jb) > KI_MAX_DOCUMENT_BYTES)
		{
			ki_errors_add(errs, KI_ERR_TOO_LARGE, "", "size", -1,
						  "document of %zu bytes exceeds the limit of %d bytes",
						  (size_t) VARSIZE_ANY_EXHDR(jb), KI_MAX_DOCUMENT_BYTES);
			return NULL;
		}
		return ki_jsonb_to_tree(a, jb);
	}
	else
	{
		text	   *t = PG_GETARG_TEXT_PP(argno);

		return ki_parse(a, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), errs);
	}
}

/*
 * The numeric of a tree's number: the one numeric_in gives for its RFC 8785
 * text (ki_format_number), made directly for an integer that text writes
 * exactly (|d| <= 2^53: the same value, scale 0).
 */
static Numeric
number_of(double d)
{
	char		num[32];

	if (fabs(d) <= 9007199254740992.0 && d == (double) (int64) d)
		return int64_to_numeric((int64) d);
	ki_format_number(d, num);
	return DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(num),
											   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1)));
}

/* jsonb's order of object keys (lengthCompareJsonbStringValue): shorter first, then bytes. */
static int
jsonb_key_cmp(const void *a, const void *b)
{
	const JsonbPair *pa = a;
	const JsonbPair *pb = b;

	if (pa->key.val.string.len != pb->key.val.string.len)
		return pa->key.val.string.len > pb->key.val.string.len ? 1 : -1;
	return memcmp(pa->key.val.string.val, pb->key.val.string.val, pa->key.val.string.len);
}

/*
 * The tree as an in-memory JsonbValue for JsonbValueToJsonb: what
 * pushJsonbValue builds, with each object's keys sorted as jsonb keeps
 * them, made in one pass without its copies.  false for an object with a
 * repeated name (the parser refuses them; a built tree might not), which
 * the caller then converts through pushJsonbValue, as jsonb_in would.
 */
static bool
tree_to_jbv(const ki_value *v, JsonbValue *out)
{
	size_t		i;

	switch (v->type)
	{
		case KI_OBJECT:
			{
				JsonbPair  *pairs = palloc(Max(v->u.obj.count, 1) * sizeof(JsonbPair));

				for (i = 0; i < v->u.obj.count; i++)
				{
					pairs[i].key.type = jbvString;
					pairs[i].key.val.string.val = (char *) v->u.obj.members[i].key.ptr;
					pairs[i].key.val.string.len = (int) v->u.obj.members[i].key.len;
					pairs[i].order = (uint32) i;
					if (!tree_to_jbv(v->u.obj.members[i].value, &pairs[i].value))
						return false;
				}
				if (v->u.obj.count > 1)
				{
					qsort(pairs, v->u.obj.count, sizeof(JsonbPair), jsonb_key_cmp);
					for (i = 1; i < v->u.obj.count; i++)
						if (jsonb_key_cmp(&pairs[i - 1], &pairs[i]) == 0)
							return false;
				}
				out->type = jbvObject;
				out->val.object.nPairs = (int) v->u.obj.count;
				out->val.object.pairs = pairs;
				return true;
			}
		case KI_ARRAY:
			{
				JsonbValue *elems = palloc(Max(v->u.arr.count, 1) * sizeof(JsonbValue));

				for (i = 0; i < v->u.arr.count; i++)
					if (!tree_to_jbv(v->u.arr.items[i], &elems[i]))
						return false;
				out->type = jbvArray;
				out->val.array.nElems = (int) v->u.arr.count;
				out->val.array.elems = elems;
				out->val.array.rawScalar = false;
				return true;
			}
		case KI_NULL:
			out->type = jbvNull;
			return true;
		case KI_TRUE:
		case KI_FALSE:
			out->type = jbvBool;
			out->val.boolean = v->type == KI_TRUE;
			return true;
		case KI_STRING:
			out->type = jbvString;
			out->val.string.val = (char *) v->u.str.ptr;
			out->val.string.len = (int) v->u.str.len;
			return true;
		case KI_NUMBER:
			out->type = jbvNumeric;
			out->val.numeric = number_of(v->u.num);
			return true;
	}
	return false;
}

static JsonbValue *
push_tree(JsonbParseState **state, const ki_value *v, bool is_elem)
{
	JsonbValue	jv;
	size_t		i;

	switch (v->type)
	{
		case KI_OBJECT:
			pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
			for (i = 0; i < v->u.obj.count; i++)
			{
				jv.type = jbvString;
				jv.val.string.val = (char *) v->u.obj.members[i].key.ptr;
				jv.val.string.len = (int) v->u.obj.members[i].key.len;
				pushJsonbValue(state, WJB_KEY, &jv);
				push_tree(state, v->u.obj.members[i].value, false);
			}
			return pushJsonbValue(state, WJB_END_OBJECT, NULL);
		case KI_ARRAY:
			pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
			for (i = 0; i < v->u.arr.count; i++)
				push_tree(state, v->u.arr.items[i], true);
			return pushJsonbValue(state, WJB_END_ARRAY, NULL);
		case KI_NULL:
			jv.type = jbvNull;
			break;
		case KI_TRUE:
		case KI_FALSE:
			jv.type = jbvBool;
			jv.val.boolean = v->type == KI_TRUE;
			break;
		case KI_STRING:
			jv.type = jbvString;
			jv.val.string.val = (char *) v->u.str.ptr;
			jv.val.string.len = (int) v->u.str.len;
			break;
		case KI_NUMBER:
			jv.type = jbvNumeric;
			jv.val.numeric = number_of(v->u.num);
			break;
	}
	if (*state == NULL)
	{
		/* a scalar document is a one-element raw array */
		JsonbValue	arr;

		arr.type = jbvArray;
		arr.val.array.rawScalar = true;
		arr.val.array.nElems = 1;
		pushJsonbValue(state, WJB_BEGIN_ARRAY, &arr);
		pushJsonbValue(state, WJB_ELEM, &jv);
		return pushJsonbValue(state, WJB_END_ARRAY, NULL);
	}
	return pushJsonbValue(state, is_elem ? WJB_ELEM : WJB_VALUE, &jv);
}

/*
 * Find a U+0000 in a string or member name of the tree; true with its path
 * in *path.  jsonb cannot hold U+0000 (its text form would end there).
 */
static bool
has_nul(const ki_value *v)
{
	size_t		i;

	switch (v->type)
	{
		case KI_STRING:
			return memchr(v->u.str.ptr, '\0', v->u.str.len) != NULL;
		case KI_ARRAY:
			for (i = 0; i < v->u.arr.count; i++)
				if (has_nul(v->u.arr.items[i]))
					return true;
			return false;
		case KI_OBJECT:
			for (i = 0; i < v->u.obj.count; i++)
				if (memchr(v->u.obj.members[i].key.ptr, '\0', v->u.obj.members[i].key.len) != NULL ||
					has_nul(v->u.obj.members[i].value))
					return true;
			return false;
		default:
			return false;
	}
}

static bool
find_nul(const ki_value *v, ki_buf *path)
{
	size_t		i,
				mark = path->len;

	switch (v->type)
	{
		case KI_STRING:
			return memchr(v->u.str.ptr, '\0', v->u.str.len) != NULL;
		case KI_ARRAY:
			for (i = 0; i < v->u.arr.count; i++)
			{
				ki_path_index(path, i);
				if (find_nul(v->u.arr.items[i], path))
					return true;
				path->len = mark;
			}
			return false;
		case KI_OBJECT:
			for (i = 0; i < v->u.obj.count; i++)
			{
				const ki_member *m = &v->u.obj.members[i];

				ki_path_key(path, m->key.ptr, m->key.len);
				if (memchr(m->key.ptr, '\0', m->key.len) != NULL || find_nul(m->value, path))
					return true;
				path->len = mark;
			}
			return false;
		default:
			return false;
	}
}

/*
 * A jsonb value from a tree.  A tree holding U+0000 is refused with the
 * path of the first one: jsonb would keep the bytes but every text form of
 * it would end at the NUL, so the stored document would no longer digest to
 * its key.
 */
Jsonb *
ki_tree_to_jsonb(const ki_value *v)
{
	JsonbParseState *state = NULL;
	JsonbValue *res;
	JsonbValue	root;
	ki_arena	a;
	ki_buf		path;

	if (has_nul(v))
	{
		/* its path, found the slow way, for the message */
		ki_pg_arena_init(&a);
		ki_buf_init(&path, &a, 64);
		(void) find_nul(v, &path);
		ereport(ERROR,
				(errcode(ERRCODE_UNTRANSLATABLE_CHARACTER),
				 errmsg("cannot store a document containing U+0000 at %s",
						path.len > 0 ? ki_buf_cstr(&path) : "(root)"),
				 errdetail("jsonb cannot hold the character U+0000; storing it would cut the string there and change the document's digest."),
				 errhint("Remove the \\u0000 escape from the document; kbench_digest() and kbench_canonical() accept it.")));
	}
	if ((v->type == KI_OBJECT || v->type == KI_ARRAY) && tree_to_jbv(v, &root))
		return JsonbValueToJsonb(&root);
	res = push_tree(&state, v, false);

	return JsonbValueToJsonb(res);
}

static int
sqlstate_of(ki_status st)
{
	switch (st)
	{
		case KI_ERR_SYNTAX:
			return ERRCODE_INVALID_JSON_TEXT;
		case KI_ERR_DUPLICATE:
			return ERRCODE_NON_UNIQUE_KEYS_IN_A_JSON_OBJECT;
		case KI_ERR_TOO_LARGE:
		case KI_ERR_TOO_DEEP:
			return ERRCODE_PROGRAM_LIMIT_EXCEEDED;
		case KI_ERR_NUMBER:
			return ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE;
		case KI_ERR_NOMEM:
			return ERRCODE_OUT_OF_MEMORY;
		default:
			return ERRCODE_INVALID_PARAMETER_VALUE;
	}
}

/* Raise the errors as one ERROR (see kernelindex.h). */
void
ki_pg_report(const ki_errors *errs, const char *what)
{
	const ki_error *first = &errs->items[0];
	StringInfoData detail;
	int			i;

	initStringInfo(&detail);
	for (i = 1; i < errs->count && i <= 20; i++)
		appendStringInfo(&detail, "%s%s: %s (%s)", i > 1 ? "; " : "Also: ",
						 errs->items[i].path[0] ? errs->items[i].path : "(root)",
						 errs->items[i].message, errs->items[i].rule);
	if (errs->count > 21)
		appendStringInfo(&detail, "; and %d more", errs->count - 21);
	if (detail.len > 0)
		appendStringInfoChar(&detail, '.');
	ereport(ERROR,
			(errcode(sqlstate_of(errs->status)),
			 errmsg("invalid %s at %s: %s (rule %s)", what,
					first->path[0] ? first->path : "(root)", first->message, first->rule),
			 detail.len > 0 ? errdetail_internal("%s", detail.data) : 0,
			 errs->count > 1 ? errhint("kbench_validate() lists every problem as rows.") : 0));
	pg_unreachable();
}

/* Parse, validate and normalize a manifest argument, or raise. */
ki_value *
ki_pg_manifest_arg(FunctionCallInfo fcinfo, int argno, ki_arena *a, ki_kind *kind)
{
	ki_errors	errs;
	ki_value   *doc;

	ki_errors_init(&errs, a);
	doc = ki_pg_arg_tree(fcinfo, argno, a, &errs);
	if (doc == NULL)
		ki_pg_report(&errs, "JSON");
	if (ki_manifest_normalize(a, doc, kind, &errs) == NULL)
		ki_pg_report(&errs, "manifest");
	return doc;
}
