-- 0.2.0: the roles kbench_user and kbench_admin (sql/05_roles.sql).
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
