-- Reproductions are linked by the system only (issue 24, item 3): the
-- link function that took any job and any run goes; the link keeps the
-- job's owner (who sees its id and status in kbench_reproductions).  The
-- functions and the view are re-run from sql/45_reproductions_link.sql
-- (41_reproductions_link.sql); the column privileges by 99_privileges.sql.
-- IF [NOT] EXISTS: from 0.1.0, the 0.1.0--0.2.0 script made the table from
-- the current sql/45_reproductions.sql already.
DROP FUNCTION IF EXISTS kbench__link_reproduction(text, bigint);
ALTER TABLE kbench_reproduction_jobs ADD COLUMN IF NOT EXISTS owner name;
UPDATE kbench_reproduction_jobs l SET owner = j.owner FROM kbench_jobs j WHERE j.id = l.job_id AND l.owner IS NULL;
