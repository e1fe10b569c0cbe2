/*
 * liger_time.c: calendar arithmetic: a CSV timestamp as a UTC instant.
 */
#include "liger_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int
days_in_month(long y, int m)
{
	static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool		leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : dim[m - 1];
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static long
days_from_civil(long y, int m, int d)
{
	long		era,
				yoe,
				doy,
				doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void
civil_from_days(long z, long *y, int *m, int *d)
{
	long		era,
				doe,
				yoe,
				doy,
				mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int) (doy - (153 * mp + 2) / 5 + 1);
	*m = (int) (mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static bool
digits(const char *p, int n, int *out)
{
	int			v = 0;

	for (int i = 0; i < n; i++)
	{
		if (!isdigit((unsigned char) p[i]))
			return false;
		v = v * 10 + (p[i] - '0');
	}
	*out = v;
	return true;
}

/*
 * "YYYY-MM-DD HH:MM[:SS[.fff...]][Z|+HH:MM|-HH:MM]" (a "T" may stand for
 * the blank) -> "YYYY-MM-DDTHH:MM:SS.mmmZ".  Without a zone the time is UTC
 * (the upstream CSV's convention); an offset is folded into UTC; fractions
 * beyond milliseconds are cut.
 */
const char *
ki_liger_utc_instant(ki_arena *a, const char *ts)
{
	int			year,
				mon,
				day,
				hh,
				mm,
				ss = 0,
				ms = 0,
				off = 0;
	const char *p = ts;
	long		days,
				secs,
				y;
	char		out[80];

	if (!digits(p, 4, &year) || p[4] != '-' || !digits(p + 5, 2, &mon) || p[7] != '-' ||
		!digits(p + 8, 2, &day) || (p[10] != ' ' && p[10] != 'T') ||
		!digits(p + 11, 2, &hh) || p[13] != ':' || !digits(p + 14, 2, &mm))
		return NULL;
	p += 16;
	if (*p == ':')
	{
		if (!digits(p + 1, 2, &ss))
			return NULL;
		p += 3;
		if (*p == '.')
		{
			int			n = 0;

			p++;
			if (!isdigit((unsigned char) *p))
				return NULL;
			while (isdigit((unsigned char) *p))
			{
				if (n < 3)
					ms = ms * 10 + (*p - '0');
				n++;
				p++;
			}
			for (; n < 3; n++)
				ms *= 10;
		}
	}
	if (*p == 'Z' || *p == 'z')
		p++;
	else if (*p == '+' || *p == '-')
	{
		int			oh,
					om;

		if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) || oh > 23 || om > 59)
			return NULL;
		off = (oh * 60 + om) * (*p == '-' ? -1 : 1);
		p += 6;
	}
	if (*p != '\0')
		return NULL;
	if (mon < 1 || mon > 12 || day < 1 || day > days_in_month(year, mon) ||
		hh > 23 || mm > 59 || ss > 59)
		return NULL;

	days = days_from_civil(year, mon, day);
	secs = days * 86400L + hh * 3600L + mm * 60L + ss - off * 60L;
	days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
	secs -= days * 86400;
	civil_from_days(days, &y, &mon, &day);
	if (y < 0 || y > 9999)
		return NULL;
	snprintf(out, sizeof out, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", (int) y, mon, day,
			 (int) (secs / 3600), (int) ((secs / 60) % 60), (int) (secs % 60), ms);
	return ki_strndup(a, out, strlen(out));
}
