-- Pictures of the history (docs/REPORTS.md): SVG charts from SQL and a
-- self-contained HTML report.
--
--   kbench_chart(spec jsonb)            draws any chart described as jsonb (the
--                                       four charts below are built on it)
--   kbench_chart_sweep(...)             one operation, pass and device: a metric
--                                       against one swept axis, a line and band
--                                       per implementation
--   kbench_chart_series(...)            one implementation family in a workload
--                                       over its points, regressions marked
--   kbench_chart_roofline(...)          one device: every run against the roofs
--   kbench_chart_records(...)           a cohort's leaders over time
--   kbench_report(...)                  one HTML page: leaders, speedups,
--                                       regressions, alerts, jobs, the charts
--
-- Everything is deterministic: the same rows give the same bytes (no clock,
-- no random ids, numbers printed at a fixed precision).  No JavaScript.  The
-- functions run as their caller (SECURITY INVOKER): they read only what the
-- caller may read, and the report lists only the jobs the caller may see.

--------------------------------------------------------------------------
-- Building blocks (public: they only format text)
--------------------------------------------------------------------------

-- Text made safe for XML/HTML content and attribute values: the five
-- special characters escaped, the control characters XML 1.0 forbids dropped.
CREATE OR REPLACE FUNCTION kbench_svg_escape(s text) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN replace(replace(replace(replace(replace(
	         regexp_replace(coalesce(s, ''), '[\x01-\x08\x0B\x0C\x0E-\x1F\x7F]', '', 'g'),
	         '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;');
COMMENT ON FUNCTION kbench_svg_escape(text) IS 'text escaped for XML and HTML (& < > " '' and the control characters XML forbids)';

-- A number as a short label: three significant digits and an SI suffix
-- (1.5k, 3.35T, 0.25, 2e-05).
CREATE OR REPLACE FUNCTION kbench_svg_number(v float8) RETURNS text
	LANGUAGE plpgsql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp
	SET extra_float_digits = 1 AS $$
DECLARE
	a float8 := abs(v);
	scale float8 := 1;
	suffix text := '';
	n numeric;
	s text;
BEGIN
	IF v IS NULL OR v <> v OR a = 'Infinity'::float8 THEN
		RETURN '';
	ELSIF a = 0 THEN
		RETURN '0';
	ELSIF a < 1e-3 THEN
		RETURN replace(btrim(to_char(v, '9.9EEEE')), '.0e', 'e');
	END IF;
	a := round(a / 10 ^ (floor(log(a)) - 2)) * 10 ^ (floor(log(a)) - 2);   -- as it will print
	IF a >= 1e15 THEN scale := 1e15; suffix := 'P';
	ELSIF a >= 1e12 THEN scale := 1e12; suffix := 'T';
	ELSIF a >= 1e9 THEN scale := 1e9; suffix := 'G';
	ELSIF a >= 1e6 THEN scale := 1e6; suffix := 'M';
	ELSIF a >= 1e3 THEN scale := 1e3; suffix := 'k';
	END IF;
	n := (v / scale)::numeric;
	s := round(n, greatest(0, 2 - floor(log(abs(n)))::int))::text;
	IF s LIKE '%.%' THEN
		s := regexp_replace(regexp_replace(s, '0+$', ''), '\.$', '');
	END IF;
	RETURN s || suffix;
END $$;
COMMENT ON FUNCTION kbench_svg_number(float8) IS 'a number as a short chart label: three significant digits and an SI suffix (k, M, G, T, P)';

-- A duration as a short label in the unit that reads naturally (issue 29:
-- never "1M µs"): v in unit (ns, µs or us, ms, s), shown in as_unit, or
-- when NULL in the largest unit that keeps it at 1 or more (3 significant
-- digits: 1.36 ms, 250 µs, 12.5 s, 800 ns).
CREATE OR REPLACE FUNCTION kbench_svg_duration(v float8, unit text DEFAULT 'µs', as_unit text DEFAULT NULL) RETURNS text
	LANGUAGE plpgsql STABLE PARALLEL SAFE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	f float8 := CASE unit WHEN 'ns' THEN 1 WHEN 'µs' THEN 1e3 WHEN 'us' THEN 1e3 WHEN 'ms' THEN 1e6 WHEN 's' THEN 1e9 END;
	ns float8;
	a float8;
	u text := CASE WHEN as_unit = 'us' THEN 'µs' ELSE as_unit END;
BEGIN
	IF v IS NULL OR v <> v OR abs(v) = 'Infinity'::float8 OR f IS NULL THEN
		RETURN '';
	END IF;
	ns := v * f;
	IF u IS NULL THEN
		a := abs(ns);
		IF a > 0 THEN
			a := round(a / 10 ^ (floor(log(a)) - 2)) * 10 ^ (floor(log(a)) - 2);   -- as it will print
		END IF;
		u := CASE WHEN a >= 1e9 THEN 's' WHEN a >= 1e6 THEN 'ms' WHEN a >= 1e3 THEN 'µs' ELSE 'ns' END;
	END IF;
	RETURN kbench_svg_number(ns / CASE u WHEN 's' THEN 1e9 WHEN 'ms' THEN 1e6 WHEN 'µs' THEN 1e3 ELSE 1 END) || ' ' || u;
END $$;
COMMENT ON FUNCTION kbench_svg_duration(float8, text, text) IS 'a duration as a chart label in ns, µs, ms or s (the unit that keeps it at 1 or more, or as_unit), three significant digits';

-- A series' marker (shape 0 circle, 1 square, 2 triangle, 3 diamond,
-- 4 triangle down, 5 cross) at (x, y), with a title for hover when given.
CREATE OR REPLACE FUNCTION kbench_svg_marker(shape int, x float8, y float8, fill text, stroke text, title text DEFAULT NULL) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp
	RETURN CASE shape % 6
	         WHEN 0 THEN format('<circle cx="%s" cy="%s" r="3.6"', round(x::numeric, 1), round(y::numeric, 1))
	         WHEN 1 THEN format('<rect x="%s" y="%s" width="6.6" height="6.6"', round((x - 3.3)::numeric, 1), round((y - 3.3)::numeric, 1))
	         WHEN 2 THEN format('<path d="M%s,%sl4,7h-8z"', round(x::numeric, 1), round((y - 4.4)::numeric, 1))
	         WHEN 3 THEN format('<path d="M%s,%sl4.4,4.4l-4.4,4.4l-4.4,-4.4z"', round(x::numeric, 1), round((y - 4.4)::numeric, 1))
	         WHEN 4 THEN format('<path d="M%s,%sl4,-7h-8z"', round(x::numeric, 1), round((y + 4.4)::numeric, 1))
	         ELSE format('<path d="M%s,%sl8,8m0,-8l-8,8"', round((x - 4)::numeric, 1), round((y - 4)::numeric, 1)) END
	       || format(' fill="%s" stroke="%s" stroke-width="%s"', fill, stroke, CASE WHEN shape % 6 = 5 THEN '2' ELSE '1.5' END)
	       || CASE WHEN title IS NULL THEN '/>'
	               ELSE '><title>' || replace(replace(replace(replace(replace(
	                      regexp_replace(title, '[\x01-\x08\x0B\x0C\x0E-\x1F\x7F]', '', 'g'),
	                      '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;') || '</title>'
	                    || CASE shape % 6 WHEN 0 THEN '</circle>' WHEN 1 THEN '</rect>' ELSE '</path>' END END;
COMMENT ON FUNCTION kbench_svg_marker(int, float8, float8, text, text, text) IS 'an SVG marker of one of six shapes (circle, square, triangle, diamond, triangle down, cross), with a title when given';
