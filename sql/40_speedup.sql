--------------------------------------------------------------------------
-- Speedup against a named baseline
--------------------------------------------------------------------------

CREATE FUNCTION kbench__geomean_step(state float8[], x float8) RETURNS float8[]
	LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
	IF x IS NULL THEN
		RETURN state;
	END IF;
	IF x <= 0 OR x = 'Infinity'::float8 OR x = 'NaN'::float8 THEN
		RAISE EXCEPTION 'kbench_geomean needs positive finite values, got %', x USING ERRCODE = 'invalid_parameter_value';
	END IF;
	RETURN ARRAY[state[1] + ln(x), state[2] + 1];
END $$;

CREATE FUNCTION kbench__geomean_combine(a float8[], b float8[]) RETURNS float8[]
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN ARRAY[a[1] + b[1], a[2] + b[2]];

CREATE FUNCTION kbench__geomean_final(state float8[]) RETURNS float8
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN CASE WHEN state[2] > 0 THEN exp(state[1] / state[2]) END;

CREATE AGGREGATE kbench_geomean(float8) (
	SFUNC = kbench__geomean_step,
	STYPE = float8[],
	INITCOND = '{0,0}',
	COMBINEFUNC = kbench__geomean_combine,
	FINALFUNC = kbench__geomean_final,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE kbench_geomean(float8) IS 'geometric mean of positive values (NULLs ignored; NULL when there are none)';

-- kbench_speedup and kbench_speedup_summary: sql/40_speedup_report.sql.
