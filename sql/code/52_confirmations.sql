-- Confirmation reruns: the trigger on kbench_runs that judges them and
-- checks every other run against the alert rules (sql/code/51_alerts.sql).

-- Statement-level, after runs land (kbench_ingest, the imports, the
-- runner): a confirmation rerun is judged; every other run is checked
-- against the enabled rules.  A restore (a COPY FROM into kbench_runs named
-- with its schema, as pg_dump writes it: only the owner can write the table)
-- is not checked: the alerts, which pg_dump keeps, come back with it.
CREATE OR REPLACE FUNCTION _kernelindex.alerts_after_insert() RETURNS trigger
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	c kbench_alert_confirmations;
	run kbench_runs;
	judged text[] := '{}';
BEGIN
	-- a restore (_kernelindex.copying_into, sql/50_continuous_alerts.sql: the
	-- executing statement, never its text, issue 24 item 7)
	IF _kernelindex.copying_into(TG_RELID) THEN
		RETURN NULL;
	END IF;
	-- the run of a confirmation job is stored (by the worker or an agent
	-- running it, _kernelindex.storing_job): judge it.  The job is named by who
	-- stores its run, never by a pid a claimer gave.
	IF _kernelindex.storing_job() IS NOT NULL THEN
		FOR c IN SELECT k.* FROM kbench_alert_confirmations k JOIN kbench_jobs j ON j.id = k.job_id
		          WHERE k.verdict IS NULL AND k.job_id = _kernelindex.storing_job() AND j.status = 'running' LOOP
			FOR run IN SELECT r.* FROM kbench_runs r JOIN landed l ON l.digest = r.digest LOOP
				PERFORM _kernelindex.judge_confirmation(c, run);
				judged := judged || run.digest;
			END LOOP;
		END LOOP;
	END IF;
	IF EXISTS (SELECT 1 FROM kbench_alert_rules WHERE enabled) THEN
		PERFORM _kernelindex.alert_check(ARRAY(SELECT l.digest FROM landed l WHERE NOT (l.digest = ANY (judged))));
	END IF;
	RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION _kernelindex.alerts_after_insert() FROM PUBLIC;

CREATE OR REPLACE TRIGGER alerts AFTER INSERT ON kbench_runs REFERENCING NEW TABLE AS landed
	FOR EACH STATEMENT EXECUTE FUNCTION _kernelindex.alerts_after_insert();
