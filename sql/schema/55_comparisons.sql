--------------------------------------------------------------------------
-- Paired A/B comparisons
--------------------------------------------------------------------------

-- A comparison: ONE job that times A and B interleaved on one device
-- (kernels/compare.c): both sides set up with the same inputs (the
-- protocol's seed), warmed up, then rounds of a block of A's calls and a
-- block of B's, the cache flushed before every timed call.  The worker
-- stores both runs (each with its raw samples) and fills in the result in
-- the transaction that finishes the job.
CREATE TABLE kbench_comparisons (
	id bigserial PRIMARY KEY,
	operation text NOT NULL,
	mode text NOT NULL,
	workload jsonb NOT NULL,
	a text,                               -- implementation A (NULL: the device's own)
	b text,
	device text NOT NULL,
	protocol jsonb NOT NULL,
	rounds int NOT NULL CHECK (rounds BETWEEN 3 AND 1000),
	same_pct float8 NOT NULL CHECK (same_pct > 0),
	job_id bigint NOT NULL,               -- the one job that times both (kbench_jobs.id)
	owner name NOT NULL,
	queued_at timestamptz NOT NULL DEFAULT now(),
	-- stored by the worker with the two runs:
	a_run text,                           -- kbench_runs.digest of A's run
	b_run text,
	call_order text,                      -- the blocks as they ran, one letter each: 'ABAB...'
	calls_per_block int,                  -- timed calls in each block
	a_round_ns float8[],                  -- each round's median, A's
	b_round_ns float8[],
	a_median_ns float8,                   -- the median of the rounds' medians
	b_median_ns float8,
	ratio float8,                         -- b_median_ns / a_median_ns
	ratio_low float8,                     -- its 95% interval (bootstrap over rounds)
	ratio_high float8,
	verdict text CHECK (verdict IN ('faster', 'slower', 'same', 'ambiguous')),
	finished_at timestamptz
);
CREATE INDEX ON kbench_comparisons (job_id);
COMMENT ON TABLE kbench_comparisons IS 'paired A/B comparisons: one job times A and B in alternating blocks on one device';
-- Written by kbench_compare (as the extension's owner) and the worker;
-- everyone reads them.
SELECT pg_catalog.pg_extension_config_dump('kbench_comparisons', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_comparisons_id_seq', '');
