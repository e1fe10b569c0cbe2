--------------------------------------------------------------------------
-- Records: the best competing run per cohort and implementation, kept by
-- triggers on kbench_runs, and the history of each cohort's leader.
--------------------------------------------------------------------------

-- Derived state, maintained by the triggers below (not dumped: restoring
-- kbench_runs rebuilds it).
CREATE TABLE kbench_cohort_bests (
	workload_digest text NOT NULL,
	protocol_digest text NOT NULL,
	environment_digest text NOT NULL,
	implementation_digest text NOT NULL,
	run_digest text NOT NULL,
	primary_ns bigint NOT NULL,
	low_ns bigint NOT NULL,
	high_ns bigint NOT NULL,
	observed_at timestamptz NOT NULL,
	PRIMARY KEY (workload_digest, protocol_digest, environment_digest, implementation_digest)
);
COMMENT ON TABLE kbench_cohort_bests IS 'derived: each implementation''s best competing run per cohort (lowest primary_ns, then earliest, then digest)';

CREATE TABLE kbench_record_history (
	id bigserial PRIMARY KEY,
	workload_digest text NOT NULL,
	protocol_digest text NOT NULL,
	environment_digest text NOT NULL,
	run_digest text,                      -- the new leader; NULL when no competing run is left
	implementation_digest text,
	primary_ns bigint,
	previous_run_digest text,             -- the leader it displaced
	previous_primary_ns bigint,
	at timestamptz NOT NULL,              -- the new leader's observed_at (the withdrawal's time when none is left)
	cause text NOT NULL CHECK (cause IN ('first', 'faster', 'retracted', 'superseded')),
	recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ON kbench_record_history (workload_digest, protocol_digest, environment_digest, id);
CREATE INDEX ON kbench_record_history (run_digest);
COMMENT ON TABLE kbench_record_history IS 'each cohort''s leaders in the order they appeared: first, faster (beat the leader), retracted / superseded (the leader was withdrawn)';
-- The history says in what order things happened, which the runs alone
-- cannot: pg_dump keeps it (ids and recorded_at included).  pg_restore
-- loads it before kbench_runs (table data in name order), and the records
-- trigger then adds nothing to it (see _kernelindex.records_after_insert).
SELECT pg_catalog.pg_extension_config_dump('kbench_record_history', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_record_history_id_seq', '');

-- The current records (kbench_records) and each cohort's record alone
-- (kbench_leaders) are views over kbench_cohort_bests, written once, in
-- sql/code/56_ranking.sql, with the rule they rank by (the 95% interval of
-- the difference between two bests).
-- kbench_leaders reads the record of each cohort without ranking every
-- implementation first: one ordered index pass over the bests.
CREATE INDEX ON kbench_cohort_bests (workload_digest, protocol_digest, environment_digest, primary_ns, observed_at, run_digest);
