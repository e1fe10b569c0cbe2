-- Paired A/B comparisons (the table: sql/schema/55_comparisons.sql).

-- Queue a paired comparison of implementations a and b: one job; returns
-- the comparison's id.  Validated as kbench_run validates (both sides).
--   SELECT kbench_compare('layer_norm', 'backward', '{"rows": 4096, "hidden": 4096, "dtype": "bf16"}', 'cuda', 'cuda/v2');
CREATE OR REPLACE FUNCTION kbench_compare(operation text, mode text, workload jsonb, a text, b text, rounds int DEFAULT 10,
                               device text DEFAULT NULL, protocol jsonb DEFAULT '{}', same_pct float8 DEFAULT 2,
                               timeout interval DEFAULT NULL, max_minutes float8 DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'kbench_compare' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION kbench_compare(text, text, jsonb, text, text, int, text, jsonb, float8, interval, float8) IS 'queue a paired A/B comparison: one job times A and B interleaved on one device; read it with kbench_comparison(id)';

-- The paired statistics of kernels/stats.c (kb_paired_ratio), the one
-- routine the worker, kbench compare and this use: the ratio of medians
-- B / A over rounds, its 95% interval by a bootstrap over rounds (2,000
-- resamples of whole rounds; deterministic) and the verdict for B: faster
-- (the interval lies below 1 - same_pct/100), slower (above 1 +
-- same_pct/100), same (inside 1 -+ same_pct/100), else ambiguous.
CREATE OR REPLACE FUNCTION kbench_paired_ratio(a_ns float8[], b_ns float8[], same_pct float8 DEFAULT 2,
	OUT a_median_ns float8, OUT b_median_ns float8, OUT ratio float8, OUT ratio_low float8, OUT ratio_high float8,
	OUT verdict text)
	AS 'MODULE_PATHNAME', 'kbench_paired_ratio' LANGUAGE C IMMUTABLE;
COMMENT ON FUNCTION kbench_paired_ratio(float8[], float8[], float8) IS 'paired A/B statistics over per-round times: ratio of medians B/A, its bootstrap 95% interval over rounds, the verdict for B';

-- A comparison's result, as the worker stored it; status follows its job:
-- queued, running, done (both runs passed), failed (a side did not pass, or
-- the job failed), timeout, canceled.  rounds_done counts the rounds timed.
CREATE OR REPLACE FUNCTION kbench_comparison(comparison_id bigint,
	OUT id bigint, OUT status text, OUT rounds_done int, OUT a_median_ns float8, OUT b_median_ns float8,
	OUT ratio float8, OUT ratio_low float8, OUT ratio_high float8, OUT verdict text,
	OUT a_run text, OUT b_run text, OUT call_order text, OUT job_id bigint)
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
DECLARE
	c kbench_comparisons;
	j kbench_jobs;
BEGIN
	SELECT * INTO c FROM kbench_comparisons x WHERE x.id = comparison_id;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'comparison % does not exist', comparison_id USING ERRCODE = 'no_data_found',
			HINT = 'kbench_comparisons lists the comparisons.';
	END IF;
	-- the job is read as the caller (row-level security): its owner sees its state
	SELECT * INTO j FROM kbench_jobs x WHERE x.id = c.job_id;
	id := c.id;
	job_id := c.job_id;
	status := CASE WHEN c.finished_at IS NOT NULL THEN
	                    CASE WHEN c.verdict IS NOT NULL THEN 'done' WHEN j.status IN ('timeout', 'canceled') THEN j.status ELSE 'failed' END
	               WHEN j.status IN ('queued', 'running') THEN j.status
	               WHEN j.status IS NOT NULL THEN j.status
	               ELSE 'unknown' END;
	rounds_done := coalesce(cardinality(c.a_round_ns), 0);
	a_median_ns := c.a_median_ns;
	b_median_ns := c.b_median_ns;
	ratio := c.ratio;
	ratio_low := c.ratio_low;
	ratio_high := c.ratio_high;
	verdict := c.verdict;
	a_run := c.a_run;
	b_run := c.b_run;
	call_order := c.call_order;
END $$;
COMMENT ON FUNCTION kbench_comparison(bigint) IS 'a paired comparison''s result: medians, ratio B/A with a bootstrap 95% interval over rounds, verdict faster / slower / same / ambiguous';

-- Two providers compared across every operation that has both, in one
-- call, from the history: per operation, protocol and device, the geometric
-- mean of kbench_speedup's speedups (baseline / candidate; above 1: the
-- candidate is faster) and how many workloads each side wins strictly (the
-- 95% interval of the difference excludes zero, as kbench_records ranks) or
-- within noise.  operation_key, pass: the operation's short name and the
-- timed pass, as kbench_speedup gives them.
CREATE OR REPLACE FUNCTION kbench_compare_providers(baseline text, candidate text, mode text DEFAULT NULL, environment text DEFAULT NULL)
	RETURNS TABLE (operation text, protocol text, device text, workloads bigint, geomean_speedup float8,
	               min_speedup float8, max_speedup float8, candidate_faster bigint, baseline_faster bigint, within_noise bigint,
	               operation_key text, pass text)
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
#variable_conflict use_column
DECLARE
	op text;
	found_any boolean := false;
	any_row boolean := false;
BEGIN
	IF baseline IS NULL OR candidate IS NULL THEN
		RAISE EXCEPTION 'a baseline and a candidate are required' USING ERRCODE = 'null_value_not_allowed',
			HINT = 'Name two providers, e.g. kbench_compare_providers(''huggingface'', ''liger'').';
	END IF;
	PERFORM _kernelindex.resolve_protocols(mode), _kernelindex.resolve_environments(environment);
	FOR op IN SELECT o.name FROM kbench_operations o GROUP BY o.name ORDER BY o.name LOOP
		BEGIN
			RETURN QUERY
			SELECT op, s.protocol, s.device, count(*), kbench_geomean(s.speedup), min(s.speedup), max(s.speedup),
			       count(*) FILTER (WHERE d.diff > d.half_c),
			       count(*) FILTER (WHERE -d.diff > d.half_b),
			       count(*) FILTER (WHERE NOT d.diff > d.half_c AND NOT -d.diff > d.half_b),
			       _kernelindex.op_key(op), kbench_protocol_mode(s.protocol)
			  FROM _kernelindex.speedup(op, baseline, candidate, mode, environment, true) s
			  JOIN kbench_runs rb ON rb.digest = s.baseline_run
			  JOIN kbench_runs rc ON rc.digest = s.candidate_run
			  CROSS JOIN LATERAL (
			       SELECT (rb.primary_ns - rc.primary_ns)::float8 AS diff,
			              -- the candidate strictly faster: b - c beyond b's lower and c's upper half-widths
			              sqrt(greatest(rb.primary_ns - (kbench_run_spread(rb)).low_ns, 0)::float8 ^ 2
			                   + greatest((kbench_run_spread(rc)).high_ns - rc.primary_ns, 0)::float8 ^ 2) AS half_c,
			              sqrt(greatest(rc.primary_ns - (kbench_run_spread(rc)).low_ns, 0)::float8 ^ 2
			                   + greatest((kbench_run_spread(rb)).high_ns - rb.primary_ns, 0)::float8 ^ 2) AS half_b) d
			 GROUP BY s.protocol, s.device
			 ORDER BY s.device, s.protocol;
			any_row := any_row OR FOUND;
			found_any := true;
		EXCEPTION WHEN undefined_object OR ambiguous_parameter THEN
			NULL;                              -- the operation lacks one of the two
		END;
	END LOOP;
	IF NOT found_any THEN
		RAISE EXCEPTION 'no operation has both "%" and "%"', baseline, candidate USING ERRCODE = 'undefined_object',
			HINT = 'Name providers as kbench_speedup takes them: an implementation name, its provider (huggingface, torch, liger) or title.';
	END IF;
	IF NOT any_row THEN
		-- never silently empty (issue 29): once, for every operation
		PERFORM _kernelindex.say_empty('kbench_compare_providers',
			'no operation has runs of both in one cohort (the same pass and device)',
			jsonb_build_array(jsonb_build_object('role', 'baseline', 'typed', baseline,
			                                     'digests', to_jsonb(_kernelindex.resolve_implementation(NULL, baseline, 'baseline'))),
			                  jsonb_build_object('role', 'candidate', 'typed', candidate,
			                                     'digests', to_jsonb(_kernelindex.resolve_implementation(NULL, candidate, 'candidate')))),
			nullif(concat_ws(' on ', mode, environment), ''));
	END IF;
END $$;
COMMENT ON FUNCTION kbench_compare_providers(text, text, text, text) IS 'two providers across every operation that has both: geomean speedup per operation, protocol and device, and strict wins by the difference rule';
REVOKE ALL ON FUNCTION kbench_compare(text, text, jsonb, text, text, int, text, jsonb, float8, interval, float8) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_compare(text, text, jsonb, text, text, int, text, jsonb, float8, interval, float8) TO kbench_user;
GRANT SELECT ON kbench_comparisons TO PUBLIC;
