-- Units (issue 13): every SQL column that holds a time holds nanoseconds
-- (bigint, named *_ns); these turn one into text for people.

-- Three significant digits, no trailing zeros: 12.30 -> 12.3, 4.567 -> 4.57, 123.4 -> 123.
CREATE OR REPLACE FUNCTION _kernelindex.three_digits(x numeric) RETURNS text
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN trim_scale(round(x, greatest(0, 2 - floor(log(greatest(abs(x), 1e-9)))::int)))::text;

-- A duration in ns as people read it, three significant digits and the
-- largest unit that keeps it at 1 or more: 850 ns, 12.3 µs, 4.56 ms, 1.23 s,
-- 2.5 min.  NULL stays NULL.
CREATE OR REPLACE FUNCTION kbench_format_ns(ns bigint) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN CASE WHEN ns IS NULL THEN NULL
	            WHEN abs(ns) < 1000 THEN ns || ' ns'
	            WHEN abs(ns) < 1000000 THEN _kernelindex.three_digits(ns / 1e3) || ' µs'
	            WHEN abs(ns) < 1000000000 THEN _kernelindex.three_digits(ns / 1e6) || ' ms'
	            WHEN abs(ns) < 60000000000 THEN _kernelindex.three_digits(ns / 1e9) || ' s'
	            ELSE _kernelindex.three_digits(ns / 6e10) || ' min' END;
COMMENT ON FUNCTION kbench_format_ns(bigint) IS 'a duration in ns as text for people: 850 ns, 12.3 µs, 4.56 ms, 1.23 s, 2.5 min';
