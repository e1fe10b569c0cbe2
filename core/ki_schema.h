/*
 * ki_schema.h: the compiled form of the published JSON Schemas (internal).
 *
 * The thirteen kernelindex.dev/v1alpha1 schemas in schemas/ are embedded as
 * text (schemas_data.c, generated) and compiled on first use into sch_node
 * trees: the tables that drive validation.  Only the keywords those schemas
 * use are supported, and compiling a schema with any other keyword fails, so
 * a new schema version cannot be half-understood silently.
 */
#ifndef KI_SCHEMA_H
#define KI_SCHEMA_H

#include "ki_json.h"

enum
{
	SCH_NULL = 1 << 0,
	SCH_BOOLEAN = 1 << 1,
	SCH_NUMBER = 1 << 2,
	SCH_INTEGER = 1 << 3,
	SCH_STRING = 1 << 4,
	SCH_ARRAY = 1 << 5,
	SCH_OBJECT = 1 << 6
};

typedef bool (*sch_pattern_fn) (const char *s, size_t len);

typedef struct sch_node sch_node;

typedef struct sch_prop
{
	const char *name;
	size_t		len;
	sch_node   *schema;
	bool		required;
} sch_prop;

struct sch_node
{
	unsigned	types;			/* SCH_* bits; 0 = any */
	const ki_value *const_value;
	const ki_value *enum_values;	/* array */
	sch_pattern_fn pattern;
	const char *pattern_name;
	long		min_length;		/* -1 when absent */
	long		max_length;
	bool		has_minimum,
				has_maximum,
				has_exclusive_minimum;
	double		minimum,
				maximum,
				exclusive_minimum;
	bool		date_time;		/* format: date-time */
	/* objects */
	sch_prop   *props;
	int			nprops;
	int			additional;		/* 0 forbidden, 1 any, 2 additional_schema */
	sch_node   *additional_schema;
	sch_node   *property_names;
	/* arrays */
	sch_node   *items;
	sch_node  **prefix_items;
	int			nprefix;
	long		min_items;		/* -1 when absent */
	long		max_items;
	/* anyOf */
	sch_node  **any_of;
	int			nany;
	/* an anyOf of a nanosecond integer and a duration string */
	bool		duration;
};

/* The compiled schema of a kind (NULL when it failed to compile: a bug). */
const sch_node *ki_schema_for(ki_kind kind, const char **compile_error);

/* Embedded schema texts, indexed by ki_kind (schemas_data.c). */
extern const char *const ki_schema_texts[KI_KIND_COUNT];

/* Pattern matchers by their JSON Schema source text; NULL when unknown. */
sch_pattern_fn ki_pattern_lookup(const char *source, size_t len);

/*
 * Validate (and normalize durations in place) v against node, appending
 * every problem to errs with paths under path.
 */
void		ki_schema_validate(const sch_node *node, ki_value *v, const ki_path *path, ki_errors *errs);

/* Parse a duration string to integer nanoseconds; false when ambiguous. */
bool		ki_parse_duration(const char *s, size_t len, double *ns);

/* UTF-16 length of a UTF-8 string (what JavaScript's .length counts). */
size_t		ki_utf16_length(const char *s, size_t len);

#endif							/* KI_SCHEMA_H */
