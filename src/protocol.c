/*
 * protocol.c: the protocol settings of a job, one table: each setting's
 * name, range and kind, and the request field it sets.  kbench_run checks
 * a job's settings against it (ki_protocol_check); the worker sets the
 * request from them (ki_protocol_apply).
 */
#include "protocol.h"

#include <math.h>

#include "lib/stringinfo.h"

#include "../kernels/kb_protocol.h"

typedef enum
{
	SET_WARMUP_MS,
	SET_REP_MS,
	SET_FLUSH_BYTES,
	SET_MAX_SAMPLES,
	SET_MIN_SAMPLES,
	SET_SEED,
	SET_CHECK,
	SET_ADAPTIVE,
	SET_NOISE_TARGET_PCT,
	SET_MAX_MS,
	SET_CUDA_GRAPH
} setting_id;

/*
 * The ranges are kernels/kb_protocol.h's, which the kbench CLI checks its
 * flags against too; setting_id follows its order.
 */
#define settings KB_PROTOCOL_SETTINGS
StaticAssertDecl(lengthof(KB_PROTOCOL_SETTINGS) == SET_CUDA_GRAPH + 1, "one setting_id a protocol setting");

/* "a string", "an object", ...: what a JSON value is, for an error message. */
static const char *
json_type_words(ki_type t)
{
	switch (t)
	{
		case KI_STRING:
			return "a string";
		case KI_NUMBER:
			return "a number";
		case KI_TRUE:
		case KI_FALSE:
			return "a boolean";
		case KI_NULL:
			return "null";
		case KI_ARRAY:
			return "an array";
		default:
			return "an object";
	}
}

/* The setting named by a member's key, or -1. */
static int
setting_of(const ki_member *m)
{
	for (int k = 0; k < (int) lengthof(settings); k++)
		if (strlen(settings[k].key) == m->key.len && memcmp(settings[k].key, m->key.ptr, m->key.len) == 0)
			return k;
	return -1;
}

void
ki_protocol_check(const ki_value *p)
{
	if (p == NULL || p->type != KI_OBJECT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("protocol must be a JSON object"),
				 errhint("For example {\"warmup_ms\": 25, \"rep_ms\": 100}.")));
	for (size_t i = 0; i < p->u.obj.count; i++)
	{
		const ki_member *m = &p->u.obj.members[i];
		int			k = setting_of(m);

		if (k < 0)
		{
			StringInfoData known;

			initStringInfo(&known);
			for (int j = 0; j < (int) lengthof(settings); j++)
				appendStringInfo(&known, "%s%s", j ? ", " : "", settings[j].key);
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown protocol setting \"%.*s\"", (int) m->key.len, m->key.ptr),
					 errhint("Known settings: %s.", known.data)));
		}
		/* the wrong type says which type is expected, not "out of range" */
		if (settings[k].boolean && m->value->type != KI_TRUE && m->value->type != KI_FALSE)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("protocol setting \"%s\" must be true or false, not %s", settings[k].key,
							json_type_words(m->value->type)),
					 errhint("Write a bare true or false, e.g. {\"%s\": false}.", settings[k].key)));
		if (!settings[k].boolean && m->value->type != KI_NUMBER)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("protocol setting \"%s\" must be a number, not %s", settings[k].key,
							json_type_words(m->value->type)),
					 errhint("Write a bare number, e.g. {\"%s\": 5}.", settings[k].key)));
		if (!settings[k].boolean && (m->value->u.num < settings[k].min || m->value->u.num > settings[k].max))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("protocol setting \"%s\" is out of range", settings[k].key),
					 errdetail("It must be a number from %g to %g.", settings[k].min, settings[k].max)));
		if (settings[k].integer && m->value->u.num != floor(m->value->u.num))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("protocol setting \"%s\" must be a whole number", settings[k].key),
					 errdetail("It was %g.", m->value->u.num)));
	}
}

void
ki_protocol_apply(kb_request *req, const ki_value *p)
{
	if (p == NULL || p->type != KI_OBJECT)
		return;
	for (size_t i = 0; i < p->u.obj.count; i++)
	{
		const ki_member *m = &p->u.obj.members[i];
		const ki_value *v = m->value;
		int			k = setting_of(m);

		if (k < 0 || (settings[k].boolean ? (v->type != KI_TRUE && v->type != KI_FALSE) : v->type != KI_NUMBER))
			continue;
		switch ((setting_id) k)
		{
			case SET_WARMUP_MS:
				req->warmup_ms = v->u.num;
				break;
			case SET_REP_MS:
				req->rep_ms = v->u.num;
				break;
			case SET_FLUSH_BYTES:
				req->flush_bytes = (int64_t) v->u.num;
				break;
			case SET_MAX_SAMPLES:
				req->max_samples = (int64_t) v->u.num;
				break;
			case SET_MIN_SAMPLES:
				req->min_samples = (int64_t) v->u.num;
				break;
			case SET_SEED:
				req->seed = (uint64_t) v->u.num;
				break;
			case SET_CHECK:
				req->check = v->type == KI_TRUE;
				break;
			case SET_ADAPTIVE:
				req->fixed_count = v->type == KI_FALSE;
				break;
			case SET_NOISE_TARGET_PCT:
				req->noise_target_pct = v->u.num;
				break;
			case SET_MAX_MS:
				req->max_ms = v->u.num;
				break;
			case SET_CUDA_GRAPH:
				req->cuda_graph = v->type == KI_TRUE;
				break;
		}
	}
}

void
ki_protocol_apply_text(kb_request *req, const char *json)
{
	ki_arena	a;
	ki_errors	errs;

	ki_pg_arena_init(&a);
	ki_errors_init(&errs, &a);
	ki_protocol_apply(req, ki_parse(&a, json, strlen(json), &errs));
}
