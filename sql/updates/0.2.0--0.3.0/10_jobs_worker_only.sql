-- 0.3.0, issue 24 (trust at the boundaries): a job queued with no device
-- (kbench_run picked an in-server worker's device) is never an agent's; the
-- claim that reads it (kbench__claim) is 11_claim.sql, a link to
-- sql/31_claim.sql, after this column.
ALTER TABLE kbench_jobs ADD COLUMN worker_only boolean NOT NULL DEFAULT false;
