-- 0.2.0, issue 18 (fleet): the job table's columns for agents
-- (sql/30_runner.sql); the claim that agents share with the workers
-- (kbench__claim, both forms) is 84_fleet_jobs_claim.sql, a link to
-- sql/31_claim.sql, after these columns; the agents themselves are new
-- objects, in 85_fleet.sql (a link to sql/85_fleet.sql).
ALTER TABLE kbench_jobs ADD COLUMN agent text;
ALTER TABLE kbench_jobs ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false;
