-- Roles.  Roles belong to the cluster, not to a database, so they are made
-- only when missing: a second database installing the extension, or one
-- updating it, finds them and goes on.  DROP EXTENSION leaves them.
--   kbench_user   queue, wait for and cancel one's own jobs
--   kbench_admin  everything kbench_user may, plus cancel anyone's job,
--                 prune, import from server files, register code to run
-- PUBLIC reads the catalog and the analytics.  docs/SQL.md, "Roles".
DO $roles$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'kbench_user') THEN
    CREATE ROLE kbench_user NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'kbench_admin') THEN
    CREATE ROLE kbench_admin NOLOGIN;
  END IF;
  IF NOT pg_catalog.pg_has_role('kbench_admin', 'kbench_user', 'MEMBER') THEN
    GRANT kbench_user TO kbench_admin;
  END IF;
END
$roles$;
