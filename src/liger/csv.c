/*
 * csv.c: an RFC 4180 CSV reader with physical line numbers, and the Liger
 * row reader on top of it (header check, one ki_liger_row per record).
 */
#include "liger.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const ki_liger_columns[KI_LIGER_NCOLUMNS] = {
	"kernel_name", "kernel_provider", "kernel_operation_mode", "metric_name",
	"metric_unit", "x_name", "x_label", "x_value", "y_value_50", "y_value_20",
	"y_value_80", "extra_benchmark_config_str", "gpu_name", "timestamp",
	"liger_version",
};

static const char *
fmt_error(ki_arena *a, const char *fmt,...)
	__attribute__((format(printf, 2, 3)));

static const char *
fmt_error(ki_arena *a, const char *fmt,...)
{
	char		msg[512];
	va_list		ap;
	const char *s;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	s = ki_strndup(a, msg, strlen(msg));
	return s ? s : "out of memory";
}

void
ki_csv_init(ki_csv_reader *r, ki_arena *a, const char *buf, size_t len)
{
	r->arena = a;
	r->buf = buf;
	r->len = len;
	r->pos = 0;
	r->line = 1;
	r->failed = false;
	/* a UTF-8 byte order mark is not part of the first column's name */
	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
		r->pos = 3;
}

/* Consume one line break at pos (CRLF, LF or CR) and count it. */
static void
eat_newline(ki_csv_reader *r)
{
	if (r->buf[r->pos] == '\r' && r->pos + 1 < r->len && r->buf[r->pos + 1] == '\n')
		r->pos += 2;
	else
		r->pos += 1;
	r->line++;
}

static bool
push_field(ki_csv_reader *r, ki_csv_record *rec, size_t *cap, char *field)
{
	if (field == NULL)
		return false;
	if (rec->count == *cap)
	{
		size_t		ncap = *cap ? *cap * 2 : 16;
		char	  **n = ki_alloc(r->arena, ncap * sizeof(char *));

		if (n == NULL)
			return false;
		if (rec->count)
			memcpy(n, rec->fields, rec->count * sizeof(char *));
		rec->fields = n;
		*cap = ncap;
	}
	rec->fields[rec->count++] = field;
	return true;
}

ki_csv_status
ki_csv_next(ki_csv_reader *r, ki_csv_record *rec, const char **err)
{
	const char *b = r->buf;
	size_t		cap = 0;

	*err = NULL;
	rec->fields = NULL;
	rec->count = 0;
	if (r->failed)
		return KI_CSV_END;

	/* blank lines between records are not records */
	while (r->pos < r->len && (b[r->pos] == '\n' || b[r->pos] == '\r'))
		eat_newline(r);
	if (r->pos >= r->len)
		return KI_CSV_END;

	rec->line = r->line;
	for (;;)
	{
		char	   *field;

		if (r->pos < r->len && b[r->pos] == '"')
		{
			/* quoted: "" stands for one quote; line breaks are data */
			long		opened = r->line;
			size_t		start = ++r->pos;
			size_t		n = 0;
			bool		closed = false;

			/* find the closing quote first, to size the copy */
			while (r->pos < r->len)
			{
				char		c = b[r->pos];

				if (c == '"')
				{
					if (r->pos + 1 < r->len && b[r->pos + 1] == '"')
					{
						r->pos += 2;
						continue;
					}
					closed = true;
					break;
				}
				if (c == '\0')
				{
					*err = fmt_error(r->arena, "line %ld: NUL byte in a quoted field", r->line);
					r->failed = true;
					return KI_CSV_ERROR;
				}
				if (c == '\n' || c == '\r')
					eat_newline(r);
				else
					r->pos++;
			}
			if (!closed)
			{
				*err = fmt_error(r->arena, "line %ld: unterminated quoted field (input ends on line %ld)",
								 opened, r->line);
				r->failed = true;
				return KI_CSV_ERROR;
			}
			field = ki_alloc(r->arena, r->pos - start + 1);
			if (field == NULL)
				goto nomem;
			for (size_t i = start; i < r->pos; i++)
			{
				field[n++] = b[i];
				if (b[i] == '"')
					i++;		/* the second quote of a "" pair */
			}
			field[n] = '\0';
			r->pos++;			/* the closing quote */
			if (r->pos < r->len && b[r->pos] != ',' && b[r->pos] != '\n' && b[r->pos] != '\r')
			{
				if (opened == r->line)
					*err = fmt_error(r->arena, "line %ld: unexpected character after a closing quote",
									 r->line);
				else
					*err = fmt_error(r->arena, "line %ld: a quoted field opened on line %ld runs to "
									 "line %ld and is followed by an unexpected character "
									 "(unterminated quote?)", opened, opened, r->line);
				r->failed = true;
				return KI_CSV_ERROR;
			}
		}
		else
		{
			size_t		start = r->pos;

			while (r->pos < r->len && b[r->pos] != ',' && b[r->pos] != '\n' && b[r->pos] != '\r')
			{
				if (b[r->pos] == '"')
				{
					*err = fmt_error(r->arena, "line %ld: quote inside an unquoted field", r->line);
					r->failed = true;
					return KI_CSV_ERROR;
				}
				if (b[r->pos] == '\0')
				{
					*err = fmt_error(r->arena, "line %ld: NUL byte in a field", r->line);
					r->failed = true;
					return KI_CSV_ERROR;
				}
				r->pos++;
			}
			field = ki_strndup(r->arena, b + start, r->pos - start);
		}
		if (!push_field(r, rec, &cap, field))
			goto nomem;

		if (r->pos >= r->len)
			break;
		if (b[r->pos] == ',')
		{
			r->pos++;
			continue;			/* a trailing comma gives a last, empty field */
		}
		/* end of record */
		rec->last_line = r->line;
		eat_newline(r);
		return KI_CSV_RECORD;
	}
	rec->last_line = r->line;
	return KI_CSV_RECORD;

nomem:
	*err = "out of memory";
	r->failed = true;
	return KI_CSV_ERROR;
}

/* ---------------------------------------------------------------- rows */

bool
ki_liger_reader_init(ki_liger_reader *r, ki_arena *a, const char *buf, size_t len, const char **err)
{
	ki_csv_record rec;
	ki_csv_status st;

	ki_csv_init(&r->csv, a, buf, len);
	r->records = 0;
	r->width = 0;
	for (int c = 0; c < KI_LIGER_NCOLUMNS; c++)
		r->column[c] = -1;

	st = ki_csv_next(&r->csv, &rec, err);
	if (st == KI_CSV_ERROR)
		return false;
	if (st == KI_CSV_END)
	{
		*err = "line 1: empty CSV, no header";
		r->csv.failed = true;
		return false;
	}
	for (size_t i = 0; i < rec.count; i++)
	{
		for (int c = 0; c < KI_LIGER_NCOLUMNS; c++)
		{
			if (strcmp(rec.fields[i], ki_liger_columns[c]) != 0)
				continue;
			if (r->column[c] >= 0)
			{
				*err = fmt_error(a, "line %ld: header names column '%s' twice", rec.line,
								 ki_liger_columns[c]);
				r->csv.failed = true;
				return false;
			}
			r->column[c] = (int) i;
		}
	}
	for (int c = 0; c < KI_LIGER_NCOLUMNS; c++)
	{
		if (r->column[c] < 0)
		{
			*err = fmt_error(a, "line %ld: header lacks column '%s'", rec.line, ki_liger_columns[c]);
			r->csv.failed = true;
			return false;
		}
	}
	r->width = rec.count;
	*err = NULL;
	return true;
}

ki_liger_read_status
ki_liger_reader_next(ki_liger_reader *r, ki_liger_row *row, const char **err)
{
	ki_csv_record rec;
	ki_csv_status st = ki_csv_next(&r->csv, &rec, err);
	const char *v[KI_LIGER_NCOLUMNS];

	if (st == KI_CSV_ERROR)
		return KI_LIGER_READ_FATAL;
	if (st == KI_CSV_END)
		return KI_LIGER_READ_END;
	r->records++;
	if (rec.count != r->width)
	{
		*err = fmt_error(r->csv.arena, "line %ld: expected %zu fields, found %zu", rec.line,
						 r->width, rec.count);
		row->line = rec.line;
		return KI_LIGER_READ_BAD_RECORD;
	}
	for (int c = 0; c < KI_LIGER_NCOLUMNS; c++)
		v[c] = rec.fields[r->column[c]];
	row->kernel_name = v[0];
	row->kernel_provider = v[1];
	row->kernel_operation_mode = v[2];
	row->metric_name = v[3];
	row->metric_unit = v[4];
	row->x_name = v[5];
	row->x_label = v[6];
	row->x_value = v[7];
	row->y_value_50 = v[8];
	row->y_value_20 = v[9];
	row->y_value_80 = v[10];
	row->extra_benchmark_config_str = v[11];
	row->gpu_name = v[12];
	row->timestamp = v[13];
	row->liger_version = v[14];
	row->line = rec.line;
	return KI_LIGER_READ_ROW;
}
