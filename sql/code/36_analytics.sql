-- Analytics over history (docs/ANALYTICS.md): cohorts, records and their
-- history, speedups against a baseline, regressions, roofline, sweeps.
--
-- A cohort is (workload digest, protocol digest, environment digest): the
-- workload fixes the operation, the bound sizes and dtypes, and the
-- correctness policy; the implementation is what a cohort compares.  Only
-- competing runs count: status 'passed', not retracted, not superseded,
-- with a primary statistic in ns.
--
-- One subject a part: these helpers (36), resolving names (37), cohorts (38),
-- records (39), speedups (40), statistics (41), regressions (42), roofline
-- (43), sweeps (44).

--------------------------------------------------------------------------
-- Small helpers
--------------------------------------------------------------------------

-- The short operation key of an operation name: 'liger-layer-norm' -> 'layer_norm'.
CREATE OR REPLACE FUNCTION _kernelindex.op_key(name text) RETURNS text
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN regexp_replace(replace(lower(name), '-', '_'), '^liger_', '');

-- The timed pass a protocol names: its name ends with forward, backward or full
-- (liger-bench-do-bench-backward, kbench-cuda-layer-norm-backward).
CREATE OR REPLACE FUNCTION kbench_protocol_mode(protocol_name text) RETURNS text
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN substring(protocol_name FROM '(forward|backward|full)$');
COMMENT ON FUNCTION kbench_protocol_mode(text) IS 'the timed pass (forward, backward, full) a protocol''s name ends with, or NULL';

-- The floating-point dtype of a workload (its dtypes less the integer ones).
CREATE OR REPLACE FUNCTION _kernelindex.float_dtype(dtypes text[]) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN (SELECT d FROM unnest(dtypes) d
	         WHERE d IN ('fp64', 'fp32', 'tf32', 'bf16', 'fp16', 'fp8_e4m3', 'fp8_e5m2', 'fp8')
	         ORDER BY array_position(ARRAY['fp64', 'fp32', 'tf32', 'bf16', 'fp16', 'fp8_e4m3', 'fp8_e5m2', 'fp8'], d)
	         LIMIT 1);

CREATE OR REPLACE FUNCTION _kernelindex.dtype_bytes(dtype text) RETURNS int
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN CASE WHEN dtype = 'fp64' THEN 8 WHEN dtype IN ('fp32', 'tf32') THEN 4
	            WHEN dtype IN ('bf16', 'fp16') THEN 2 WHEN dtype LIKE 'fp8%' THEN 1 END;

-- A workload's axes as numbers in axis-name order, for sorting sweeps.
CREATE OR REPLACE FUNCTION _kernelindex.axes_key(axes jsonb) RETURNS numeric[]
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN (SELECT array_agg(CASE WHEN jsonb_typeof(value) = 'number' THEN value::numeric END ORDER BY key)
	          FROM jsonb_each(coalesce(axes, '{}')));

-- Slug form (as the Liger import names things): 'Hugging Face' -> 'hugging-face'.
CREATE OR REPLACE FUNCTION _kernelindex.slug(s text) RETURNS text
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN btrim(regexp_replace(lower(s), '[^a-z0-9]+', '-', 'g'), '-');

-- The spread a run competes with: its 95% interval of the median when raw
-- samples were kept (and the interval is there), else p20..p80, else the
-- primary statistic alone.
CREATE OR REPLACE FUNCTION kbench_run_spread(r kbench_runs, OUT low_ns bigint, OUT high_ns bigint)
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN (SELECT ROW(CASE WHEN r.raw_samples_ns IS NOT NULL AND r.ci95_low_ns IS NOT NULL AND r.ci95_high_ns IS NOT NULL
	                        THEN least(r.ci95_low_ns, r.primary_ns) ELSE least(coalesce(r.p20_ns, r.primary_ns), r.primary_ns) END,
	                   CASE WHEN r.raw_samples_ns IS NOT NULL AND r.ci95_low_ns IS NOT NULL AND r.ci95_high_ns IS NOT NULL
	                        THEN greatest(r.ci95_high_ns, r.primary_ns) ELSE greatest(coalesce(r.p80_ns, r.primary_ns), r.primary_ns) END));
COMMENT ON FUNCTION kbench_run_spread(kbench_runs) IS 'the interval a run competes with: ci95 of the median when it has raw samples, else p20..p80, else the primary statistic';

-- Whether a run competes: passed, not retracted, not superseded, timed.
CREATE OR REPLACE FUNCTION kbench_competes(r kbench_runs) RETURNS boolean
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL;
COMMENT ON FUNCTION kbench_competes(kbench_runs) IS 'true for a run that takes part in comparisons: passed, not retracted, not superseded, with a primary statistic in ns';
