-- The extension's internals live in the schema _kernelindex (issue 25), a
-- member of the extension on nobody's search_path, named without a prefix:
-- the API (kbench_*) stays in the extension's schema, the user's.  First of
-- all, at install and at every update (docs/UPGRADES.md): the prelude's
-- functions after this file, the modfiles and the code name the new names.
--
-- CREATE SCHEMA IF NOT EXISTS in an extension script refuses a schema that
-- exists and is not the extension's (PostgreSQL 15: "is not a member of
-- extension"): a _kernelindex made by a user before the install or update
-- is never adopted, the script fails (test/suites/security.sh).
CREATE SCHEMA IF NOT EXISTS _kernelindex;
COMMENT ON SCHEMA _kernelindex IS 'kernelindex''s internal functions and types: not an API';

-- An older database's internals (0.1.0's and 0.2.0's kbench__X: functions,  (internals_rename: keep)
-- the type kbench__flag, a table, view or sequence should one come) move  (internals_rename: keep)
-- here and lose their prefix, in place (ALTER ... SET SCHEMA, RENAME), so
-- that rows and what depends on them by OID follow: views, triggers, column
-- defaults, CHECK constraints, the geomean aggregate, the GIN index on the
-- agents' device names.  Bodies kept as text (plpgsql) are made anew by the
-- code, which every update re-runs.  By what the database holds, not by a
-- list; at a fresh install, and at a second run, there is nothing to move.
DO $internal$
DECLARE
	o record;
	ext oid := (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'kernelindex');
BEGIN
	FOR o IN
		SELECT 'TYPE' AS kind, t.oid AS obj, t.typname::text AS name
		  FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_type t ON t.oid = d.objid
		 WHERE d.classid = 'pg_catalog.pg_type'::pg_catalog.regclass AND d.deptype = 'e'
		   AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.refobjid = ext
		   AND t.typname LIKE 'kbench\_\_%'  -- internals_rename: keep (the old names)
		UNION ALL
		SELECT CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END,
		       c.oid, c.relname::text
		  FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_class c ON c.oid = d.objid
		 WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.deptype = 'e'
		   AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.refobjid = ext
		   AND c.relname LIKE 'kbench\_\_%'  -- internals_rename: keep (the old names)
		UNION ALL
		SELECT 'ROUTINE', p.oid, p.proname::text
		  FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_proc p ON p.oid = d.objid
		 WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.deptype = 'e'
		   AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.refobjid = ext
		   AND p.proname LIKE 'kbench\_\_%'  -- internals_rename: keep (the old names)
		 ORDER BY 1 DESC, 3, 2
	LOOP
		IF o.kind = 'TYPE' THEN
			EXECUTE pg_catalog.format('ALTER TYPE %s SET SCHEMA _kernelindex', o.obj::pg_catalog.regtype);
			EXECUTE pg_catalog.format('ALTER TYPE %s RENAME TO %I', o.obj::pg_catalog.regtype, pg_catalog.substr(o.name, 9));
		ELSIF o.kind = 'ROUTINE' THEN
			EXECUTE pg_catalog.format('ALTER ROUTINE %s SET SCHEMA _kernelindex', o.obj::pg_catalog.regprocedure);
			EXECUTE pg_catalog.format('ALTER ROUTINE %s RENAME TO %I', o.obj::pg_catalog.regprocedure, pg_catalog.substr(o.name, 9));
		ELSE
			EXECUTE pg_catalog.format('ALTER %s %s SET SCHEMA _kernelindex', o.kind, o.obj::pg_catalog.regclass);
			EXECUTE pg_catalog.format('ALTER %s %s RENAME TO %I', o.kind, o.obj::pg_catalog.regclass, pg_catalog.substr(o.name, 9));
		END IF;
	END LOOP;
END
$internal$;

