-- Privileges: who may do what, for every object of the extension, in one
-- place.  It runs last, after every code file has made its objects, at
-- install and at every update.
-- docs/SQL.md, "Roles"; docs/ARCHITECTURE.md, "Name resolution and rights";
-- test/suites/security.sh checks it.
--
--   PUBLIC        reads the catalog and the analytics; runs the identity
--                 and analytics functions (which only read)
--   kbench_user   queues, waits for and cancels its own jobs
--   kbench_admin  a kbench_user that also cancels anyone's job, prunes the
--                 job list, ingests and imports (server files: with the
--                 file-reading rights of PostgreSQL's pg_read_server_files)
--   the owner     everything else (rebuilding records, the staging table)

-- Queueing, waiting and cancelling: kbench_user.
REVOKE ALL ON FUNCTION kbench_run(text, text, jsonb, text, text, jsonb, interval, boolean, float8) FROM PUBLIC;
REVOKE ALL ON FUNCTION kbench_wait(bigint, interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION kbench_cancel(bigint) FROM PUBLIC;
REVOKE ALL ON PROCEDURE kbench_bench(text, text, jsonb, text, text, jsonb, interval, boolean, interval, bigint, text, text,
	bigint, bigint, bigint, bigint, double precision, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_run(text, text, jsonb, text, text, jsonb, interval, boolean, float8) TO kbench_user;
GRANT EXECUTE ON FUNCTION kbench_wait(bigint, interval) TO kbench_user;
GRANT EXECUTE ON FUNCTION kbench_cancel(bigint) TO kbench_user;
GRANT EXECUTE ON PROCEDURE kbench_bench(text, text, jsonb, text, text, jsonb, interval, boolean, interval, bigint, text, text,
	bigint, bigint, bigint, bigint, double precision, text, text) TO kbench_user;

-- Jobs: a role sees its own; kbench_admin (who may cancel any) and
-- pg_read_all_data see all.  Rows are written only by the extension.
REVOKE ALL ON kbench_jobs FROM PUBLIC;
GRANT SELECT ON kbench_jobs TO PUBLIC;
ALTER POLICY kbench_jobs_visible ON kbench_jobs
	USING (owner = current_user OR pg_catalog.pg_has_role(current_user, 'pg_read_all_data', 'USAGE')
	       OR pg_catalog.pg_has_role(current_user, 'kbench_admin', 'USAGE'));

-- Reproductions: which run reproduced which is public; the job's id, status
-- and owner are its owner's (kbench_reproductions shows them to whoever
-- sees the job; sql/code/45_reproductions.sql).
REVOKE ALL ON kbench_reproduction_jobs FROM PUBLIC;
GRANT SELECT (reported_run, reproduced_run, requested_at) ON kbench_reproduction_jobs TO PUBLIC;

-- Pruning the job list: kbench_admin, through the owner's rights.
ALTER FUNCTION kbench_prune_jobs(interval) SECURITY DEFINER;
REVOKE ALL ON FUNCTION kbench_prune_jobs(interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_prune_jobs(interval) TO kbench_admin;

-- Writing the catalog: ingests and imports are kbench_admin's (and the
-- owner's).  They validate as the caller and write as the owner: the C
-- entry points switch to the owner's rights and the pinned search_path for
-- their writes (src/catalog_writer.c), kbench_retract and kbench_supersede
-- are SECURITY DEFINER.  Reading a server file needs the caller's own right
-- to it: COPY FROM a file (kbench_import_catalog) needs pg_read_server_files,
-- pg_read_file (kbench_import_liger_file) a superuser or a grant of it; from
-- the client, kbench_admin \copy's into kbench_import_staging.
REVOKE ALL ON FUNCTION kbench_ingest(json, text), kbench_ingest(jsonb, text), kbench_ingest(text, text),
	kbench_import_catalog_staged(text), kbench_import_catalog(text),
	kbench_import_liger(text, text), kbench_import_liger_file(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_ingest(json, text), kbench_ingest(jsonb, text), kbench_ingest(text, text),
	kbench_import_catalog_staged(text), kbench_import_catalog(text),
	kbench_import_liger(text, text), kbench_import_liger_file(text) TO kbench_admin;
ALTER FUNCTION kbench_retract(text, text) SECURITY DEFINER;
ALTER FUNCTION kbench_supersede(text, text, text) SECURITY DEFINER;
REVOKE ALL ON FUNCTION kbench_retract(text, text), kbench_supersede(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_retract(text, text), kbench_supersede(text, text, text) TO kbench_admin;
REVOKE ALL ON FUNCTION kbench_rebuild_records() FROM PUBLIC;
GRANT INSERT (line) ON kbench_import_staging TO kbench_admin;
GRANT USAGE ON SEQUENCE kbench_import_staging_n_seq TO kbench_admin;

-- The export's own rows (record events, artifacts, sources, aliases) are
-- catalog too: PUBLIC reads them, and so may run kbench_export_catalog().
GRANT SELECT ON kbench_catalog_rows, kbench_catalog_source_rows TO PUBLIC;

-- What each import did, for everyone; where it read from (a server path),
-- for kbench_admin.
REVOKE ALL ON kbench_imports FROM PUBLIC;
GRANT SELECT (id, kind, started_at, finished_at, lines, inserted, present, skipped, rejected,
	memory_inserted, memory_present, memory_rejected) ON kbench_imports TO PUBLIC;
GRANT SELECT ON kbench_imports TO kbench_admin;

-- Why lines were rejected: PUBLIC holds SELECT, and a row-level policy
-- shows each role only the rejections of its own imports (kbench_admin and
-- pg_read_all_data: all).  The policy is in sql/code/20_import_rejections.sql.
REVOKE ALL ON kbench_import_rejections FROM PUBLIC;
GRANT SELECT ON kbench_import_rejections TO PUBLIC;

-- Agents (sql/code/85_fleet.sql): kbench_agent registers, heartbeats, claims,
-- stores its results and stops, through these SECURITY DEFINER functions
-- only; it has no right on a table.
REVOKE ALL ON FUNCTION kbench_agent_register(text, text, int, text, jsonb, text[]),
	kbench_agent_heartbeat(text, bigint, bigint, int, real), kbench_agent_claim(text, bigint, int),
	kbench_agent_finish(text, bigint, bigint, int, text, json, text), kbench_agent_stop(text, bigint, bigint, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_agent_register(text, text, int, text, jsonb, text[]),
	kbench_agent_heartbeat(text, bigint, bigint, int, real), kbench_agent_claim(text, bigint, int),
	kbench_agent_finish(text, bigint, bigint, int, text, json, text), kbench_agent_stop(text, bigint, bigint, int) TO kbench_agent;

-- The internals (_kernelindex, sql/prelude/00_internal_schema.sql): no
-- role is given anything there but PUBLIC's USAGE, which the API needs
-- under the caller's rights (a plpgsql or SQL function PUBLIC runs,
-- kbench_regressions, resolves _kernelindex.series_filter as its caller);
-- nothing may be created there but by the owner.  EXECUTE: the rule below.
REVOKE ALL ON SCHEMA _kernelindex FROM PUBLIC;
GRANT USAGE ON SCHEMA _kernelindex TO PUBLIC;

-- Rules over every function of the extension, so that functions added
-- later follow them too:
--   - an internal function (_kernelindex.*) that can write (VOLATILE) or is
--     a trigger is executable by its owner only: the SECURITY DEFINER API
--     functions, the triggers and the C (as the owner) call it.  The STABLE
--     and IMMUTABLE ones stay executable by PUBLIC: the analytics PUBLIC
--     reads call them, and a view's or a function's caller needs EXECUTE on
--     what it calls;
--   - a SECURITY DEFINER function and a trigger function run with
--     search_path pinned to pg_catalog, the extension's schema and pg_temp
--     (an internal one too: what it names unqualified is the API's).
DO $privileges$
DECLARE
	f record;
	ext_schema name := (SELECT n.nspname FROM pg_catalog.pg_extension e
	                      JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'kernelindex');
BEGIN
	FOR f IN
		SELECT p.oid::pg_catalog.regprocedure AS sig, p.proname, p.provolatile, p.prosecdef, p.prokind,
		       p.prorettype = 'pg_catalog.trigger'::pg_catalog.regtype AS is_trigger,
		       p.proconfig, n.nspname
		  FROM pg_catalog.pg_depend d
		  JOIN pg_catalog.pg_proc p ON p.oid = d.objid
		  JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
		 WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.deptype = 'e'
		   AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
		   AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'kernelindex')
		 ORDER BY p.oid
	LOOP
		IF f.nspname = '_kernelindex' AND f.prokind = 'f' AND (f.provolatile = 'v' OR f.is_trigger) THEN
			EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f.sig);
		END IF;
		IF (f.prosecdef OR f.is_trigger) AND f.prokind = 'f' THEN
			EXECUTE pg_catalog.format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp', f.sig, ext_schema);
		END IF;
	END LOOP;
END
$privileges$;
