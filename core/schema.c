/*
 * schema.c: compile the embedded JSON Schemas into tables and validate
 * documents against them.
 *
 * The compiled schemas live for the life of the process in an arena of
 * their own (malloc'd once; in a PostgreSQL backend that is once per
 * backend, about 200 kB).
 */
#include "ki_schema.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static ki_arena schema_arena;
static bool schema_arena_ready = false;
static sch_node *compiled[KI_KIND_COUNT];
static const char *compile_errors[KI_KIND_COUNT];

static bool
str_is(const ki_str *s, const char *lit)
{
	size_t		n = strlen(lit);

	return s->len == n && memcmp(s->ptr, lit, n) == 0;
}

static const char *
compile_fail(const char *what)
{
	return what;
}

static sch_node *compile_node(const ki_value *v, const char **err);

static sch_node **
compile_list(const ki_value *arr, int *count, const char **err)
{
	sch_node  **list;
	size_t		i;

	if (arr->type != KI_ARRAY || arr->u.arr.count == 0)
	{
		*err = compile_fail("anyOf/prefixItems must be a non-empty array");
		return NULL;
	}
	list = ki_alloc(&schema_arena, arr->u.arr.count * sizeof(sch_node *));
	if (list == NULL)
		return NULL;
	for (i = 0; i < arr->u.arr.count; i++)
		if ((list[i] = compile_node(arr->u.arr.items[i], err)) == NULL)
			return NULL;
	*count = (int) arr->u.arr.count;
	return list;
}

static unsigned
type_bit(const ki_str *s)
{
	if (str_is(s, "null"))
		return SCH_NULL;
	if (str_is(s, "boolean"))
		return SCH_BOOLEAN;
	if (str_is(s, "number"))
		return SCH_NUMBER;
	if (str_is(s, "integer"))
		return SCH_INTEGER;
	if (str_is(s, "string"))
		return SCH_STRING;
	if (str_is(s, "array"))
		return SCH_ARRAY;
	if (str_is(s, "object"))
		return SCH_OBJECT;
	return 0;
}

static sch_node *
compile_node(const ki_value *v, const char **err)
{
	sch_node   *n;
	size_t		i;
	const ki_value *required = NULL;

	if (v->type != KI_OBJECT)
	{
		*err = "a schema must be an object";
		return NULL;
	}
	n = ki_alloc(&schema_arena, sizeof(sch_node));
	if (n == NULL)
		return NULL;
	memset(n, 0, sizeof(*n));
	n->min_length = n->max_length = n->min_items = n->max_items = -1;
	n->additional = 1;

	for (i = 0; i < v->u.obj.count; i++)
	{
		const ki_str *k = &v->u.obj.members[i].key;
		const ki_value *x = v->u.obj.members[i].value;

		if (str_is(k, "$comment") || str_is(k, "$id") || str_is(k, "$schema") ||
			str_is(k, "title") || str_is(k, "description"))
			continue;
		if (str_is(k, "type"))
		{
			if (x->type == KI_STRING)
				n->types = type_bit(&x->u.str);
			else if (x->type == KI_ARRAY)
			{
				size_t		j;

				for (j = 0; j < x->u.arr.count; j++)
					if (x->u.arr.items[j]->type == KI_STRING)
						n->types |= type_bit(&x->u.arr.items[j]->u.str);
			}
			if (n->types == 0)
			{
				*err = "unknown type";
				return NULL;
			}
		}
		else if (str_is(k, "const"))
			n->const_value = x;
		else if (str_is(k, "enum"))
		{
			if (x->type != KI_ARRAY)
			{
				*err = "enum must be an array";
				return NULL;
			}
			n->enum_values = x;
		}
		else if (str_is(k, "pattern"))
		{
			if (x->type != KI_STRING ||
				(n->pattern = ki_pattern_lookup(x->u.str.ptr, x->u.str.len)) == NULL)
			{
				*err = "unknown pattern";
				return NULL;
			}
			n->pattern_name = ki_strndup(&schema_arena, x->u.str.ptr, x->u.str.len);
		}
		else if (str_is(k, "format"))
		{
			if (x->type != KI_STRING || !str_is(&x->u.str, "date-time"))
			{
				*err = "unknown format";
				return NULL;
			}
			n->date_time = true;
		}
		else if (x->type == KI_NUMBER &&
				 (str_is(k, "maxLength") || str_is(k, "minLength") ||
				  str_is(k, "minItems") || str_is(k, "maxItems")))
		{
			long		val = (long) x->u.num;

			if (str_is(k, "maxLength"))
				n->max_length = val;
			else if (str_is(k, "minLength"))
				n->min_length = val;
			else if (str_is(k, "minItems"))
				n->min_items = val;
			else
				n->max_items = val;
		}
		else if (x->type == KI_NUMBER && str_is(k, "minimum"))
		{
			n->has_minimum = true;
			n->minimum = x->u.num;
		}
		else if (x->type == KI_NUMBER && str_is(k, "maximum"))
		{
			n->has_maximum = true;
			n->maximum = x->u.num;
		}
		else if (x->type == KI_NUMBER && str_is(k, "exclusiveMinimum"))
		{
			n->has_exclusive_minimum = true;
			n->exclusive_minimum = x->u.num;
		}
		else if (str_is(k, "properties"))
		{
			size_t		j;

			if (x->type != KI_OBJECT)
			{
				*err = "properties must be an object";
				return NULL;
			}
			n->props = ki_alloc(&schema_arena, (x->u.obj.count + 1) * sizeof(sch_prop));
			if (n->props == NULL)
				return NULL;
			for (j = 0; j < x->u.obj.count; j++)
			{
				sch_prop   *p = &n->props[j];

				p->name = x->u.obj.members[j].key.ptr;
				p->len = x->u.obj.members[j].key.len;
				p->required = false;
				if ((p->schema = compile_node(x->u.obj.members[j].value, err)) == NULL)
					return NULL;
			}
			n->nprops = (int) x->u.obj.count;
		}
		else if (str_is(k, "required"))
			required = x;
		else if (str_is(k, "additionalProperties"))
		{
			if (x->type == KI_FALSE)
				n->additional = 0;
			else if (x->type == KI_TRUE)
				n->additional = 1;
			else
			{
				n->additional = 2;
				if ((n->additional_schema = compile_node(x, err)) == NULL)
					return NULL;
			}
		}
		else if (str_is(k, "propertyNames"))
		{
			if ((n->property_names = compile_node(x, err)) == NULL)
				return NULL;
		}
		else if (str_is(k, "items"))
		{
			if ((n->items = compile_node(x, err)) == NULL)
				return NULL;
		}
		else if (str_is(k, "prefixItems"))
		{
			if ((n->prefix_items = compile_list(x, &n->nprefix, err)) == NULL)
				return NULL;
		}
		else if (str_is(k, "anyOf"))
		{
			if ((n->any_of = compile_list(x, &n->nany, err)) == NULL)
				return NULL;
		}
		else
		{
			*err = "unsupported schema keyword";
			return NULL;
		}
	}
	if (required)
	{
		size_t		j;

		if (required->type != KI_ARRAY)
		{
			*err = "required must be an array";
			return NULL;
		}
		for (j = 0; j < required->u.arr.count; j++)
		{
			const ki_value *r = required->u.arr.items[j];
			int			p;
			bool		found = false;

			for (p = 0; r->type == KI_STRING && p < n->nprops; p++)
				if (n->props[p].len == r->u.str.len &&
					memcmp(n->props[p].name, r->u.str.ptr, r->u.str.len) == 0)
				{
					n->props[p].required = true;
					found = true;
				}
			if (!found)
			{
				*err = "required names a member without a schema";
				return NULL;
			}
		}
	}
	/* a nanosecond duration: anyOf [integer >= 0, duration string] */
	if (n->nany == 2 && n->any_of[0]->types == SCH_INTEGER &&
		n->any_of[1]->types == SCH_STRING && n->any_of[1]->pattern &&
		n->any_of[1]->pattern("1 ns", 4) && !n->any_of[1]->pattern("1", 1))
		n->duration = true;
	return n;
}

/* The compiled schema of a kind; compiles all of them on first use. */
const sch_node *
ki_schema_for(ki_kind kind, const char **compile_error)
{
	if (kind < 0 || kind >= KI_KIND_COUNT)
		return NULL;
	if (!schema_arena_ready)
	{
		int			k;

		ki_arena_init_malloc(&schema_arena);
		for (k = 0; k < KI_KIND_COUNT; k++)
		{
			ki_errors	errs;
			ki_value   *doc;
			const char *err = NULL;

			ki_errors_init(&errs, &schema_arena);
			doc = ki_parse(&schema_arena, ki_schema_texts[k], strlen(ki_schema_texts[k]), &errs);
			if (doc == NULL)
				compile_errors[k] = "the embedded schema is not valid JSON";
			else if ((compiled[k] = compile_node(doc, &err)) == NULL)
				compile_errors[k] = err ? err : "out of memory";
		}
		schema_arena_ready = true;
	}
	if (compile_error)
		*compile_error = compile_errors[kind];
	return compiled[kind];
}

/* UTF-16 code units in a UTF-8 string. */
size_t
ki_utf16_length(const char *s, size_t len)
{
	size_t		n = 0;
	size_t		i;

	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if ((c & 0xC0) != 0x80)
			n += c >= 0xF0 ? 2 : 1;
	}
	return n;
}

static const char *
type_name(const ki_value *v)
{
	switch (v->type)
	{
		case KI_NULL:
			return "null";
		case KI_TRUE:
		case KI_FALSE:
			return "boolean";
		case KI_NUMBER:
			return "number";
		case KI_STRING:
			return "string";
		case KI_ARRAY:
			return "array";
		case KI_OBJECT:
			return "object";
	}
	return "value";
}

static const char *
expected_types(unsigned t)
{
	switch (t)
	{
		case SCH_STRING:
			return "a string";
		case SCH_INTEGER:
			return "an integer";
		case SCH_NUMBER:
			return "a number";
		case SCH_BOOLEAN:
			return "a boolean";
		case SCH_OBJECT:
			return "an object";
		case SCH_ARRAY:
			return "an array";
		case SCH_NULL:
			return "null";
		default:
			return "another type";
	}
}

static bool
values_equal(const ki_value *a, const ki_value *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type)
	{
		case KI_NUMBER:
			return a->u.num == b->u.num;
		case KI_STRING:
			return a->u.str.len == b->u.str.len &&
				memcmp(a->u.str.ptr, b->u.str.ptr, a->u.str.len) == 0;
		case KI_ARRAY:
		case KI_OBJECT:
			return false;		/* the schemas use scalar const/enum only */
		default:
			return true;
	}
}

#define MAX_SAFE 9007199254740991.0

static bool
type_ok(unsigned types, const ki_value *v)
{
	if (types == 0)
		return true;
	switch (v->type)
	{
		case KI_NULL:
			return types & SCH_NULL;
		case KI_TRUE:
		case KI_FALSE:
			return types & SCH_BOOLEAN;
		case KI_STRING:
			return types & SCH_STRING;
		case KI_ARRAY:
			return types & SCH_ARRAY;
		case KI_OBJECT:
			return types & SCH_OBJECT;
		case KI_NUMBER:
			if (types & SCH_NUMBER)
				return true;
			/* an integer is a safe integer, as zod's z.int() has it */
			return (types & SCH_INTEGER) && v->u.num == floor(v->u.num) &&
				fabs(v->u.num) <= MAX_SAFE;
	}
	return false;
}

static void
add(ki_errors *errs, const ki_path *path, const char *rule, const char *fmt, const char *arg)
{
	if (errs->count_only)
		ki_errors_add(errs, KI_ERR_INVALID, NULL, rule, -1, "%s", "");
	else
		ki_errors_add(errs, KI_ERR_INVALID, ki_path_render(errs->arena, path), rule, -1, fmt, arg);
}

/* Validate v against n (see ki_schema.h). */
void
ki_schema_validate(const sch_node *n, ki_value *v, const ki_path *path, ki_errors *errs)
{
	size_t		i;
	char		num[32];

	if (n->any_of)
	{
		int			a;
		bool		ok = false;

		for (a = 0; a < n->nany && !ok; a++)
		{
			ki_errors	trial;

			ki_errors_init(&trial, errs->arena);
			trial.count_only = true;
			ki_schema_validate(n->any_of[a], v, path, &trial);
			ok = trial.count == 0;
		}
		if (!ok)
		{
			if (n->duration)
				add(errs, path, "anyOf",
					"expected a non-negative integer number of nanoseconds or a duration such as \"0.008 ms\"%s", "");
			else
				add(errs, path, "anyOf", "value matches none of the allowed forms%s", "");
			return;
		}
		if (n->duration && v->type == KI_STRING)
		{
			double		ns;

			if (!ki_parse_duration(v->u.str.ptr, v->u.str.len, &ns))
			{
				ki_errors_add(errs, KI_ERR_INVALID, ki_path_render(errs->arena, path), "duration", -1,
							  "ambiguous duration \"%.*s\": it is not an integer nanosecond count no larger than 2^53-1",
							  (int) (v->u.str.len > 100 ? 100 : v->u.str.len), v->u.str.ptr);
				return;
			}
			v->type = KI_NUMBER;
			v->u.num = ns;
		}
	}

	if (!type_ok(n->types, v))
	{
		if (n->types == SCH_INTEGER && v->type == KI_NUMBER)
			add(errs, path, "type", "expected an integer no larger than 2^53-1 in magnitude, found a non-integer or unsafe number%s", "");
		else
		{
			char		msg[96];

			snprintf(msg, sizeof(msg), "expected %s, found %s", expected_types(n->types), type_name(v));
			add(errs, path, "type", "%s", msg);
		}
		return;
	}
	if (n->const_value && !values_equal(n->const_value, v))
	{
		if (n->const_value->type == KI_STRING)
			ki_errors_add(errs, KI_ERR_INVALID, ki_path_render(errs->arena, path), "const", -1,
						  "expected \"%.*s\"", (int) n->const_value->u.str.len, n->const_value->u.str.ptr);
		else
			add(errs, path, "const", "value differs from the required constant%s", "");
		return;
	}
	if (n->enum_values)
	{
		bool		found = false;
		ki_buf		allowed;

		for (i = 0; i < n->enum_values->u.arr.count && !found; i++)
			found = values_equal(n->enum_values->u.arr.items[i], v);
		if (!found)
		{
			ki_buf_init(&allowed, errs->arena, 128);
			for (i = 0; i < n->enum_values->u.arr.count; i++)
			{
				if (i)
					ki_buf_puts(&allowed, ", ");
				ki_canonical(n->enum_values->u.arr.items[i], &allowed);
			}
			add(errs, path, "enum", "expected one of %s", ki_buf_cstr(&allowed));
			return;
		}
	}

	switch (v->type)
	{
		case KI_STRING:
			/* UTF-16 units never outnumber UTF-8 bytes: count only when it can matter */
			if ((n->max_length >= 0 && v->u.str.len > (size_t) n->max_length) || n->min_length >= 0)
			{
				size_t		len = ki_utf16_length(v->u.str.ptr, v->u.str.len);

				if (n->max_length >= 0 && len > (size_t) n->max_length)
				{
					snprintf(num, sizeof(num), "%ld", n->max_length);
					add(errs, path, "maxLength", "longer than %s characters", num);
				}
				if (n->min_length >= 0 && len < (size_t) n->min_length)
				{
					snprintf(num, sizeof(num), "%ld", n->min_length);
					add(errs, path, "minLength", "shorter than %s characters", num);
				}
			}
			if (n->pattern && !n->pattern(v->u.str.ptr, v->u.str.len))
				add(errs, path, n->date_time ? "format" : "pattern",
					n->date_time ? "expected a UTC instant such as 2026-06-15T22:13:03.000Z%s" :
					"does not match %s", n->date_time ? "" : n->pattern_name);
			break;
		case KI_NUMBER:
			if (n->has_minimum && !(v->u.num >= n->minimum))
			{
				ki_format_number(n->minimum, num);
				add(errs, path, "minimum", "less than the minimum %s", num);
			}
			if (n->has_maximum && !(v->u.num <= n->maximum))
			{
				ki_format_number(n->maximum, num);
				add(errs, path, "maximum", "greater than the maximum %s", num);
			}
			if (n->has_exclusive_minimum && !(v->u.num > n->exclusive_minimum))
			{
				ki_format_number(n->exclusive_minimum, num);
				add(errs, path, "exclusiveMinimum", "must be greater than %s", num);
			}
			break;
		case KI_ARRAY:
			if (n->min_items >= 0 && v->u.arr.count < (size_t) n->min_items)
			{
				snprintf(num, sizeof(num), "%ld", n->min_items);
				add(errs, path, "minItems", "fewer than %s items", num);
			}
			if (n->max_items >= 0 && v->u.arr.count > (size_t) n->max_items)
			{
				snprintf(num, sizeof(num), "%ld", n->max_items);
				add(errs, path, "maxItems", "more than %s items", num);
			}
			for (i = 0; i < v->u.arr.count; i++)
			{
				const sch_node *item = (int) i < n->nprefix ? n->prefix_items[i] : n->items;

				if (item == NULL)
					continue;
				{
					ki_path		child = {path, NULL, 0, i};

					ki_schema_validate(item, v->u.arr.items[i], &child, errs);
				}
			}
			break;
		case KI_OBJECT:
			{
				bool		seen_small[64];
				bool	   *seen = seen_small;

				if (n->nprops > 64)
					seen = ki_alloc(errs->arena, (size_t) n->nprops);
				if (seen == NULL)
					return;
				memset(seen, 0, (size_t) (n->nprops > 0 ? n->nprops : 1));
				for (i = 0; i < v->u.obj.count; i++)
				{
					ki_member  *m = &v->u.obj.members[i];
					const sch_node *sub = NULL;
					int			p;
					ki_path		child = {path, m->key.ptr, m->key.len, 0};

					for (p = 0; p < n->nprops; p++)
						if (n->props[p].len == m->key.len &&
							memcmp(n->props[p].name, m->key.ptr, m->key.len) == 0)
						{
							sub = n->props[p].schema;
							seen[p] = true;
							break;
						}
					if (n->property_names)
					{
						ki_value	keyv;

						keyv.type = KI_STRING;
						keyv.u.str = m->key;
						ki_schema_validate(n->property_names, &keyv, &child, errs);
					}
					if (sub == NULL)
					{
						if (n->additional == 0)
							add(errs, &child, "additionalProperties", "unknown member%s", "");
						else if (n->additional == 2)
							sub = n->additional_schema;
					}
					if (sub)
						ki_schema_validate(sub, m->value, &child, errs);
				}
				for (i = 0; i < (size_t) n->nprops; i++)
					if (n->props[i].required && !seen[i])
					{
						ki_path		child = {path, n->props[i].name, n->props[i].len, 0};

						add(errs, &child, "required", "missing required member%s", "");
					}
				break;
			}
		default:
			break;
	}
}
