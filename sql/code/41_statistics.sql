--------------------------------------------------------------------------
-- Statistics helpers
--------------------------------------------------------------------------

-- Complementary error function (Numerical Recipes' erfcc: Chebyshev fit,
-- fractional error below 1.2e-7 everywhere).
CREATE OR REPLACE FUNCTION _kernelindex.erfc(x float8) RETURNS float8
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN (SELECT CASE WHEN x >= 0 THEN a ELSE 2 - a END
	          FROM (SELECT t * exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418
	                       + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587
	                       + t * (-0.82215223 + t * 0.17087277))))))))) AS a
	                  FROM (SELECT abs(x) AS z, 1 / (1 + 0.5 * abs(x)) AS t) q) r);

-- P(Z > z) for a standard normal Z.
CREATE OR REPLACE FUNCTION kbench_normal_sf(z float8) RETURNS float8
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN 0.5 * _kernelindex.erfc(z / sqrt(2));
COMMENT ON FUNCTION kbench_normal_sf(float8) IS 'upper tail P(Z > z) of the standard normal distribution';

-- The p-quantile of the standard normal (Acklam's rational approximation,
-- relative error below 1.2e-9).
CREATE OR REPLACE FUNCTION kbench_normal_quantile(p float8) RETURNS float8
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	q float8;
	r float8;
BEGIN
	IF p <= 0 OR p >= 1 THEN
		RAISE EXCEPTION 'a probability must lie strictly between 0 and 1, got %', p USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF p < 0.02425 THEN
		q := sqrt(-2 * ln(p));
		RETURN (((((-7.784894002430293e-03 * q - 3.223964580411365e-01) * q - 2.400758277161838e+00) * q
		          - 2.549732539343734e+00) * q + 4.374664141464968e+00) * q + 2.938163982698783e+00)
		       / ((((7.784695709041462e-03 * q + 3.224671290700398e-01) * q + 2.445134137142996e+00) * q
		          + 3.754408661907416e+00) * q + 1);
	ELSIF p > 1 - 0.02425 THEN
		RETURN -kbench_normal_quantile(1 - p);
	END IF;
	q := p - 0.5;
	r := q * q;
	RETURN (((((-3.969683028665376e+01 * r + 2.209460984245205e+02) * r - 2.759285104469687e+02) * r
	          + 1.383577518672690e+02) * r - 3.066479806614716e+01) * r + 2.506628277459239e+00) * q
	       / (((((-5.447609879822406e+01 * r + 1.615858368580409e+02) * r - 1.556989798598866e+02) * r
	          + 6.680131188771972e+01) * r - 1.328068155288572e+01) * r + 1);
END $$;
COMMENT ON FUNCTION kbench_normal_quantile(float8) IS 'p-quantile of the standard normal distribution';

-- P(T > t) for Student's t with df degrees of freedom (exact finite series
-- for integer df, Abramowitz & Stegun 26.7.3-4; the normal tail above 1000).
CREATE OR REPLACE FUNCTION kbench_t_sf(t float8, df int) RETURNS float8
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	th float8;
	c2 float8;
	term float8;
	s float8;
	a float8;
BEGIN
	IF df < 1 THEN
		RAISE EXCEPTION 'degrees of freedom must be at least 1, got %', df USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF t < 0 THEN
		RETURN 1 - kbench_t_sf(-t, df);
	END IF;
	IF df > 1000 THEN
		RETURN kbench_normal_sf(t * (1 - 1 / (4.0 * df)) / sqrt(1 + t * t / (2.0 * df)));
	END IF;
	th := atan(t / sqrt(df));
	c2 := cos(th) ^ 2;
	IF df % 2 = 1 THEN
		s := 0;
		IF df > 1 THEN
			term := cos(th);
			s := term;
			FOR j IN 1 .. (df - 3) / 2 LOOP
				term := term * c2 * (2 * j) / (2 * j + 1);
				s := s + term;
			END LOOP;
		END IF;
		a := 2 / pi() * (th + sin(th) * s);
	ELSE
		term := 1;
		s := 1;
		FOR j IN 1 .. (df - 2) / 2 LOOP
			term := term * c2 * (2 * j - 1) / (2 * j);
			s := s + term;
		END LOOP;
		a := sin(th) * s;
	END IF;
	RETURN greatest((1 - a) / 2, 0);
END $$;
COMMENT ON FUNCTION kbench_t_sf(float8, int) IS 'upper tail P(T > t) of Student''s t distribution with integer degrees of freedom';

-- The p-quantile of Student's t: a Cornish-Fisher start (A&S 26.7.5), then
-- Newton steps on the exact distribution function.
CREATE OR REPLACE FUNCTION kbench_t_quantile(p float8, df int) RETURNS float8
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	z float8;
	t float8;
	n float8 := df;
	c float8;
	dens float8;
BEGIN
	IF p <= 0 OR p >= 1 THEN
		RAISE EXCEPTION 'a probability must lie strictly between 0 and 1, got %', p USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF df < 1 THEN
		RAISE EXCEPTION 'degrees of freedom must be at least 1, got %', df USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF df = 1 THEN
		RETURN tan(pi() * (p - 0.5));
	ELSIF df = 2 THEN
		RETURN (2 * p - 1) / sqrt(2 * p * (1 - p));
	END IF;
	z := kbench_normal_quantile(p);
	t := z + (z ^ 3 + z) / (4 * n) + (5 * z ^ 5 + 16 * z ^ 3 + 3 * z) / (96 * n ^ 2)
	       + (3 * z ^ 7 + 19 * z ^ 5 + 17 * z ^ 3 - 15 * z) / (384 * n ^ 3)
	       + (79 * z ^ 9 + 776 * z ^ 7 + 1482 * z ^ 5 - 1920 * z ^ 3 - 945 * z) / (92160 * n ^ 4);
	IF df > 1000 THEN
		RETURN t;
	END IF;
	-- c = Gamma((df+1)/2) / (Gamma(df/2) sqrt(df pi)), by the ratio's recurrence.
	IF df % 2 = 1 THEN
		c := 1 / sqrt(pi());
		FOR k IN 1 .. (df - 1) / 2 LOOP
			c := c * (2 * k) / (2 * k - 1.0);
		END LOOP;
	ELSE
		c := sqrt(pi()) / 2;
		FOR k IN 1 .. (df - 2) / 2 LOOP
			c := c * (2 * k + 1) / (2.0 * k);
		END LOOP;
	END IF;
	c := c / sqrt(n * pi());
	FOR i IN 1 .. 4 LOOP
		dens := c * (1 + t * t / n) ^ (-(n + 1) / 2);
		t := t - ((1 - kbench_t_sf(t, df)) - p) / dens;
	END LOOP;
	RETURN t;
END $$;
COMMENT ON FUNCTION kbench_t_quantile(float8, int) IS 'p-quantile of Student''s t distribution with integer degrees of freedom';

-- Mann-Whitney U of current against baseline samples: U of current, the
-- normal approximation's z (tie-corrected, with continuity correction) and
-- the one-sided p-value that current is stochastically larger (slower).
CREATE OR REPLACE FUNCTION kbench_mann_whitney(current bigint[], baseline bigint[], OUT u float8, OUT z float8, OUT p_value float8)
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
	WITH v AS (
		SELECT x, true AS cur FROM unnest(current) x
		UNION ALL
		SELECT x, false FROM unnest(baseline) x
	), r AS (
		SELECT cur, rank() OVER (ORDER BY x) + (count(*) OVER (PARTITION BY x) - 1) / 2.0 AS rk,
		       count(*) OVER (PARTITION BY x) AS ties
		  FROM v
	), s AS (
		SELECT sum(rk) FILTER (WHERE cur) AS r1, count(*) FILTER (WHERE cur)::float8 AS n1,
		       count(*) FILTER (WHERE NOT cur)::float8 AS n2, count(*)::float8 AS n,
		       sum((ties ^ 3 - ties) / ties) AS tie_term
		  FROM r
	), st AS (
		SELECT r1 - n1 * (n1 + 1) / 2 AS u1, n1 * n2 / 2 AS mu,
		       sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))) AS sigma
		  FROM s WHERE n1 > 0 AND n2 > 0
	)
	SELECT u1, CASE WHEN sigma > 0 THEN (u1 - mu - 0.5) / sigma END,
	       CASE WHEN sigma > 0 THEN kbench_normal_sf((u1 - mu - 0.5) / sigma) WHEN u1 > mu THEN 0 ELSE 1 END
	  FROM st
$$;
COMMENT ON FUNCTION kbench_mann_whitney(bigint[], bigint[]) IS 'Mann-Whitney U test: U of current, normal z (tie and continuity corrected), one-sided p-value that current is larger';

CREATE OR REPLACE FUNCTION _kernelindex.median(v bigint[]) RETURNS float8
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(v) x);
