-- Alerts: rules, alerts and their status, the checks as runs land,
-- acknowledging and suppressing (tables: sql/schema/51_alerts.sql).

-- An alert's status now: an acknowledgement or suppression whose time ran
-- out falls back to the verdict, else open.
CREATE OR REPLACE FUNCTION kbench_alert_effective_status(a kbench_alerts) RETURNS text
	LANGUAGE sql STABLE
	RETURN CASE WHEN a.status IN ('acknowledged', 'suppressed') AND a.until <= now() THEN coalesce(a.verdict, 'open')
	            ELSE a.status END;

-- Alerts with what they name and their confirmation.
CREATE OR REPLACE VIEW kbench_alert_status AS
SELECT a.id, kbench_alert_effective_status(a) AS status, a.status AS recorded_status, ru.name AS rule, a.method,
       a.family, o.name AS operation, kbench_protocol_mode(p.name) AS mode, w.name AS workload, w.axes,
       concat_ws(' ', e.product, e.form_factor) AS device,
       a.run_digest, r.observed_at, kbench_run_version(a.run_digest) AS version,
       kbench_run_version(a.previous_run_digest) AS previous_version,
       a.value_ns, a.baseline_ns, a.change_pct, a.statistic, a.critical, cardinality(a.runs) AS points,
       a.verdict, c.job_id AS confirmation_job, c.value_ns AS confirmation_ns, c.change_pct AS confirmation_change_pct,
       c.error AS confirmation_error, a.reason, a.until, a.changed_by, a.opened_at, a.changed_at,
       a.workload_digest, a.protocol_digest, a.environment_digest, a.rule_id,
       _kernelindex.op_key(o.name) AS operation_key, _kernelindex.device_key(e) AS device_key
  FROM kbench_alerts a
  LEFT JOIN kbench_alert_rules ru ON ru.id = a.rule_id
  LEFT JOIN kbench_runs r ON r.digest = a.run_digest
  LEFT JOIN kbench_workloads w ON w.digest = a.workload_digest
  LEFT JOIN kbench_operations o ON o.digest = w.operation_digest
  LEFT JOIN kbench_protocols p ON p.digest = a.protocol_digest
  LEFT JOIN kbench_environments e ON e.digest = a.environment_digest
  LEFT JOIN kbench_alert_confirmations c ON c.alert_id = a.id;
COMMENT ON VIEW kbench_alert_status IS 'alerts with their series'' names, effective status (lapsed acknowledgements and suppressions fall back) and confirmation';

-- Whether a device named in a rule (or kbench_check) is the environment's.
CREATE OR REPLACE FUNCTION _kernelindex.device_is(device text, e kbench_environments) RETURNS boolean
	LANGUAGE sql IMMUTABLE
	RETURN device IS NULL OR device = e.digest OR device = e.name
	    OR lower(e.product) IN (lower(device), 'nvidia ' || lower(device))
	    OR lower(e.product || ' ' || e.form_factor) IN (lower(device), 'nvidia ' || lower(device));

-- Whether a mode named in a rule is the protocol's.
CREATE OR REPLACE FUNCTION _kernelindex.mode_is(mode text, p kbench_protocols) RETURNS boolean
	LANGUAGE sql IMMUTABLE
	RETURN mode IS NULL OR CASE WHEN mode IN ('forward', 'backward', 'full') THEN kbench_protocol_mode(p.name) = mode
	                            ELSE mode IN (p.name, p.digest) END;

CREATE OR REPLACE FUNCTION _kernelindex.alert_notify(a kbench_alerts) RETURNS void
	LANGUAGE sql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	SELECT pg_notify('kbench_alerts', json_build_object('id', a.id, 'status', a.status, 'rule_id', a.rule_id,
	                 'family', a.family, 'run_digest', a.run_digest, 'change_pct', round(a.change_pct::numeric, 2))::text)
$$;
REVOKE ALL ON FUNCTION _kernelindex.alert_notify(kbench_alerts) FROM PUBLIC;

-- Queue the confirmation rerun of a new alert, when this server can rerun
-- its series: a job here produced one of the series' runs (so the
-- implementation runs here, on the alert's environment) on a device a
-- worker serves.  That job's request is queued again.
CREATE OR REPLACE FUNCTION _kernelindex.queue_confirmation(a kbench_alerts) RETURNS void
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	src kbench_jobs;
	job bigint;
BEGIN
	IF coalesce(current_setting('kernelindex.confirm_alerts', true), 'on') <> 'on' THEN
		RETURN;
	END IF;
	SELECT j.* INTO src FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest
	  LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
	 WHERE r.workload_digest = a.workload_digest AND r.protocol_digest = a.protocol_digest
	   AND r.environment_digest = a.environment_digest AND coalesce(i.name, r.implementation_digest) = a.family
	   AND j.status = 'passed'
	 ORDER BY j.run_digest = a.run_digest DESC, j.id DESC LIMIT 1;
	IF NOT FOUND THEN
		RETURN;                             -- not made here: nothing to rerun
	END IF;
	BEGIN
		IF NOT EXISTS (SELECT 1 FROM _kernelindex.workers() w WHERE w.device = src.device) THEN
			RAISE EXCEPTION 'no worker serves device %', src.device;
		END IF;
		job := kbench_run(src.operation, src.mode, src.workload, src.implementation, src.device, src.protocol);
		INSERT INTO kbench_alert_confirmations (alert_id, job_id) VALUES (a.id, job);
	EXCEPTION WHEN OTHERS THEN
		INSERT INTO kbench_alert_confirmations (alert_id, error) VALUES (a.id, SQLERRM);
	END;
END $$;
REVOKE ALL ON FUNCTION _kernelindex.queue_confirmation(kbench_alerts) FROM PUBLIC;

-- A confirmation rerun landed (the worker stores the run of the job it is
-- running): confirmed when it reproduces at least half the alert's slowdown
-- (and the rule's min_change_pct) against the alert's baseline, else
-- refuted.  An alert still open takes the verdict as its status.
CREATE OR REPLACE FUNCTION _kernelindex.judge_confirmation(c kbench_alert_confirmations, run kbench_runs) RETURNS void
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	a kbench_alerts;
	pct float8;
	v text;
BEGIN
	SELECT * INTO a FROM kbench_alerts WHERE id = c.alert_id;
	IF NOT FOUND OR a.baseline_ns IS NULL OR a.baseline_ns <= 0 THEN
		RETURN;
	END IF;
	pct := (run.primary_ns - a.baseline_ns) / a.baseline_ns * 100;
	-- an unstable rerun (its sampling stopped at a cap before the noise
	-- settled, docs/KERNELS.md Stopping) gives no verdict: it neither confirms
	-- nor refutes, and the alert stays as it is (open, until a settled run or
	-- a person decides)
	IF _kernelindex.run_unstable(run.manifest) THEN
		UPDATE kbench_alert_confirmations SET run_digest = run.digest, value_ns = run.primary_ns, change_pct = pct,
		       judged_at = now(), error = 'the confirmation rerun was unstable (stopped at a cap before its noise settled): no verdict'
		 WHERE alert_id = c.alert_id;
		RETURN;
	END IF;
	v := CASE WHEN run.status = 'passed' AND run.primary_ns IS NOT NULL
	               AND pct >= greatest(a.change_pct / 2,
	                                   coalesce((SELECT min_change_pct FROM kbench_alert_rules WHERE id = a.rule_id), 0))
	          THEN 'confirmed' ELSE 'refuted' END;
	UPDATE kbench_alert_confirmations SET run_digest = run.digest, value_ns = run.primary_ns, change_pct = pct,
	       verdict = v, judged_at = now()
	 WHERE alert_id = c.alert_id;
	UPDATE kbench_alerts SET verdict = v, status = CASE WHEN status = 'open' THEN v ELSE status END, changed_at = now()
	 WHERE id = a.id RETURNING * INTO a;
	PERFORM _kernelindex.alert_notify(a);
END $$;
REVOKE ALL ON FUNCTION _kernelindex.judge_confirmation(kbench_alert_confirmations, kbench_runs) FROM PUBLIC;

-- Check runs against the enabled rules: each competing run against the
-- previous points of its series (those observed before it), as its rules'
-- methods say.  A run that lands after later-observed runs of its series
-- (an import out of time order) changes their baselines: up to 10 of those
-- later runs are judged again with it (rejudge).  A flagged run joins the rule's alert on the series when that
-- alert's last flagged run is among the previous min(window, 20) points
-- (changepoint: when the alert's change point is in the window); otherwise
-- it opens an alert: NOTIFY kbench_alerts, and a confirmation rerun when the
-- rule asks and this server can rerun it; an unstable run never opens one
-- (it only folds into an open episode).  Returns the alerts opened.
CREATE OR REPLACE FUNCTION _kernelindex.alert_check(landed text[], only_rule int DEFAULT NULL, rejudge boolean DEFAULT true) RETURNS int
	-- a generic plan: the custom plans of this query took ~7 ms to plan, per landed run;
	-- and index scans: the plan is made once, often while kbench_runs is still
	-- small (an import), and a sequential scan per landed run then grows with it
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp SET jit = off
	SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
	c record;
	a kbench_alerts;
	opened int := 0;
	fold_id bigint;
	cp text;
	move boolean;
BEGIN
	FOR c IN
		WITH later AS (
			SELECT DISTINCT z.digest
			  FROM kbench_runs r LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
			  CROSS JOIN LATERAL (
			       -- the family's ten next runs: each member's ten next, read in order from
			       -- the family index (one range a member, not the whole cohort), then merged
			       SELECT r2.digest FROM unnest(CASE WHEN i.name IS NULL THEN ARRAY[r.implementation_digest]
			                                         ELSE ARRAY(SELECT i2.digest FROM kbench_implementations i2 WHERE i2.name = i.name) END) f(d)
			        CROSS JOIN LATERAL (
			              SELECT r2.digest, r2.observed_at FROM kbench_runs r2
			               WHERE r2.workload_digest = r.workload_digest AND r2.protocol_digest = r.protocol_digest
			                 AND r2.environment_digest = r.environment_digest AND r2.implementation_digest = f.d
			                 AND r2.status = 'passed' AND r2.retracted_at IS NULL AND r2.superseded_by IS NULL AND r2.primary_ns IS NOT NULL
			                 -- the implementation in the row too: a bound only the family index takes, so that
			                 -- the plan (generic, often made while the table is small) reads the one range
			                 AND (r2.implementation_digest, r2.observed_at, r2.digest) > (f.d, r.observed_at, r.digest)
			               ORDER BY r2.observed_at, r2.digest LIMIT 10) r2
			        ORDER BY r2.observed_at, r2.digest LIMIT 10) z
			 WHERE rejudge AND r.digest = ANY (landed)
			   AND r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL
			   -- the usual case, a run newer than its whole cohort, is told by one probe of the time index
			   AND EXISTS (SELECT 1 FROM kbench_runs r3
			                WHERE r3.workload_digest = r.workload_digest AND r3.protocol_digest = r.protocol_digest
			                  AND r3.environment_digest = r.environment_digest AND (r3.observed_at, r3.digest) > (r.observed_at, r.digest))
		), ids AS (
			SELECT unnest(landed) AS digest UNION SELECT later.digest FROM later
		), n AS (
			SELECT r.digest, r.workload_digest AS wd, r.protocol_digest AS pd, r.environment_digest AS ed,
			       r.observed_at AS oa, r.primary_ns::float8 AS x, coalesce(i.name, r.implementation_digest) AS fam,
			       CASE WHEN i.name IS NULL THEN ARRAY[r.implementation_digest]
			            ELSE ARRAY(SELECT i2.digest FROM kbench_implementations i2 WHERE i2.name = i.name) END AS fam_digests,
			       o.name AS opname, p, e, _kernelindex.run_unstable(r.manifest) AS unstable
			  FROM ids JOIN kbench_runs r ON r.digest = ids.digest
			  LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
			  LEFT JOIN kbench_workloads w ON w.digest = r.workload_digest
			  LEFT JOIN kbench_operations o ON o.digest = w.operation_digest
			  LEFT JOIN kbench_protocols p ON p.digest = r.protocol_digest
			  LEFT JOIN kbench_environments e ON e.digest = r.environment_digest
			 WHERE r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL
		), nm AS MATERIALIZED (   -- each run with its rules and the points before it, fetched once for its widest rule
			SELECT n.*, mr.rule_ids, q.rds AS all_rds, q.xs AS all_xs
			  FROM n
			  CROSS JOIN LATERAL (
			       SELECT array_agg(ru.id) AS rule_ids, max(ru.window_size + ru.persistence - 1) AS wmax
			         FROM kbench_alert_rules ru
			        WHERE ru.enabled AND (only_rule IS NULL OR ru.id = only_rule)
			          AND (ru.family IS NULL OR ru.family = n.fam)
			          AND (ru.operation IS NULL OR ru.operation = n.opname)
			          AND (ru.workload_digest IS NULL OR ru.workload_digest = n.wd)
			          AND _kernelindex.mode_is(ru.mode, n.p) AND _kernelindex.device_is(ru.device, n.e)) mr
			  CROSS JOIN LATERAL (SELECT coalesce(array_agg(z.digest ORDER BY z.observed_at, z.digest), '{}') AS rds,
			                             coalesce(array_agg(z.primary_ns::float8 ORDER BY z.observed_at, z.digest), '{}') AS xs
			                        FROM (SELECT r.digest, r.observed_at, r.primary_ns
			                                FROM unnest(n.fam_digests) f(d)
			                               CROSS JOIN LATERAL (   -- each member's latest, from the family index, merged
			                                     SELECT r.digest, r.observed_at, r.primary_ns FROM kbench_runs r
			                                      WHERE r.workload_digest = n.wd AND r.protocol_digest = n.pd AND r.environment_digest = n.ed
			                                        AND r.implementation_digest = f.d
			                                        AND r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL
			                                        AND r.primary_ns IS NOT NULL
			                                        AND (r.implementation_digest, r.observed_at, r.digest) < (f.d, n.oa, n.digest)
			                                      ORDER BY r.observed_at DESC, r.digest DESC LIMIT mr.wmax) r
			                               ORDER BY r.observed_at DESC, r.digest DESC LIMIT mr.wmax) z) q
			 WHERE mr.wmax IS NOT NULL
		), mp AS (
			SELECT nm.*, ru.id AS rule_id, ru.method, ru.window_size, ru.threshold, ru.min_change_pct, ru.persistence, ru.confirm,
			       greatest(cardinality(nm.all_rds) - (ru.window_size + ru.persistence - 1) + 1, 1) AS first
			  FROM nm JOIN kbench_alert_rules ru ON ru.id = ANY (nm.rule_ids)
		)
		SELECT mp.digest, mp.wd, mp.pd, mp.ed, mp.oa, mp.x, mp.fam, mp.rule_id, mp.method, mp.window_size, mp.confirm, mp.unstable,
		       mp.all_rds[mp.first:] AS rds, mp.all_rds[mp.first:] || mp.digest AS upto, j.*
		  FROM mp
		  CROSS JOIN LATERAL _kernelindex.judge(mp.method, mp.all_xs[mp.first:] || mp.x, mp.threshold, mp.min_change_pct,
		                                   mp.window_size, mp.persistence) j
		 WHERE j.flagged
		 ORDER BY mp.oa, mp.digest, mp.rule_id
	LOOP
		-- the same episode: fold the run into the rule's alert on the series; a
		-- change point's place and size are estimated again while the new
		-- segment grows to half the window (unless another alert of the rule
		-- holds that place)
		SELECT al.id INTO fold_id FROM kbench_alerts al
		 WHERE al.rule_id = c.rule_id AND al.workload_digest = c.wd AND al.protocol_digest = c.pd
		   AND al.environment_digest = c.ed AND al.family = c.fam
		   AND CASE WHEN c.method = 'changepoint' THEN al.run_digest = ANY (c.upto)
		            ELSE al.last_run_digest = ANY (c.rds[greatest(cardinality(c.rds) - least(c.window_size, 20) + 1, 1):]) END
		   AND NOT (c.digest = ANY (al.runs))
		 ORDER BY al.id DESC LIMIT 1;
		IF fold_id IS NOT NULL THEN
			cp := c.upto[cardinality(c.upto) - c.change_at + 1];
			move := c.method = 'changepoint' AND c.change_at * 2 <= cardinality(c.upto) AND NOT EXISTS (
				SELECT 1 FROM kbench_alerts o WHERE o.rule_id = c.rule_id AND o.workload_digest = c.wd AND o.protocol_digest = c.pd
				   AND o.environment_digest = c.ed AND o.family = c.fam AND o.id <> fold_id AND o.run_digest = cp);
			UPDATE kbench_alerts al SET runs = al.runs || c.digest, last_run_digest = c.digest,
			       run_digest = CASE WHEN move THEN cp ELSE al.run_digest END,
			       previous_run_digest = CASE WHEN move THEN c.upto[cardinality(c.upto) - c.change_at] ELSE al.previous_run_digest END,
			       baseline_ns = CASE WHEN move THEN c.baseline_ns ELSE al.baseline_ns END,
			       change_pct = CASE WHEN move THEN c.statistic ELSE al.change_pct END,
			       statistic = CASE WHEN move THEN c.statistic ELSE al.statistic END,
			       compared = CASE WHEN move THEN c.compared ELSE al.compared END
			 WHERE al.id = fold_id;
			CONTINUE;
		END IF;
		-- an unstable run (docs/KERNELS.md Stopping) does not open an alert on its
		-- own: flagged, it joins the rule's alert on the series (above) if there
		-- is one, and is otherwise left for a settled run to confirm
		CONTINUE WHEN c.unstable;
		CONTINUE WHEN EXISTS (SELECT 1 FROM kbench_alerts al
		                       WHERE al.rule_id = c.rule_id AND al.workload_digest = c.wd AND al.protocol_digest = c.pd
		                         AND al.environment_digest = c.ed AND al.family = c.fam AND c.digest = ANY (al.runs));
		a := NULL;
		INSERT INTO kbench_alerts AS al (rule_id, workload_digest, protocol_digest, environment_digest, family, run_digest,
		                                 previous_run_digest, last_run_digest, runs, method, value_ns, baseline_ns, change_pct,
		                                 statistic, critical, compared)
		SELECT c.rule_id, c.wd, c.pd, c.ed, c.fam, c.upto[cardinality(c.upto) - c.change_at + 1],
		       c.upto[cardinality(c.upto) - c.change_at], c.digest,
		       CASE WHEN c.method = 'changepoint' THEN ARRAY[c.digest]
		            ELSE c.upto[cardinality(c.upto) - c.change_at + 1:] END,
		       c.method, c.x, c.baseline_ns,
		       CASE WHEN c.method IN ('percent', 'changepoint') THEN c.statistic
		            ELSE (c.x - c.baseline_ns) / c.baseline_ns * 100 END,
		       c.statistic, c.critical, c.compared
		ON CONFLICT (rule_id, workload_digest, protocol_digest, environment_digest, family, run_digest) DO NOTHING
		RETURNING * INTO a;
		IF a.id IS NOT NULL THEN
			opened := opened + 1;
			PERFORM _kernelindex.alert_notify(a);
			IF c.confirm THEN
				PERFORM _kernelindex.queue_confirmation(a);
			END IF;
		END IF;
	END LOOP;
	RETURN opened;
END $$;
REVOKE ALL ON FUNCTION _kernelindex.alert_check(text[], int, boolean) FROM PUBLIC;

-- The trigger that judges confirmation reruns and checks every other run
-- as it lands (_kernelindex.alerts_after_insert) is sql/code/52_confirmations.sql;
-- who silences alerts, and what a restore is, below.

-- Define an alert rule.  implementation, operation, mode, environment and
-- workload select the series (NULL: any), named as kbench_regressions takes
-- them.  method: percent (threshold: slowdown %, default 5, window 10),
-- zscore (z, 5, window 100), ttest (confidence, 0.99, window 64),
-- changepoint (step %, 3, window 50).  Existing history is not scanned: kbench_alert_scan(name) does that.
CREATE OR REPLACE FUNCTION kbench_alert_rule(name text, method text DEFAULT 'percent', implementation text DEFAULT NULL,
                                  operation text DEFAULT NULL, mode text DEFAULT NULL, environment text DEFAULT NULL,
                                  workload text DEFAULT NULL, window_size int DEFAULT NULL, threshold float8 DEFAULT NULL,
                                  min_change_pct float8 DEFAULT 1, persistence int DEFAULT NULL, confirm boolean DEFAULT true)
	RETURNS kbench_alert_rules
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	m text := lower(method);
	f record;
	ru kbench_alert_rules;
	w int;
	lo int;
	p int;
	thr float8;
BEGIN
	IF name IS NULL OR btrim(name) = '' THEN
		RAISE EXCEPTION 'an alert rule needs a name' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF m IS NULL OR m NOT IN ('percent', 'zscore', 'ttest', 'changepoint') THEN
		RAISE EXCEPTION 'unknown alert method "%"', method USING ERRCODE = 'invalid_parameter_value',
			HINT = 'Use percent, zscore, ttest or changepoint.';
	END IF;
	w := coalesce(window_size, CASE m WHEN 'percent' THEN 10 WHEN 'zscore' THEN 100 WHEN 'ttest' THEN 64 ELSE 50 END);
	thr := coalesce(threshold, CASE m WHEN 'ttest' THEN 0.99 WHEN 'changepoint' THEN 3 ELSE 5 END);
	lo := CASE m WHEN 'percent' THEN 1 WHEN 'zscore' THEN 2 WHEN 'ttest' THEN 3 ELSE 10 END;
	IF w < lo OR w > 1000 THEN
		RAISE EXCEPTION 'window must be between % and 1000 for method %, got %', lo, m, w
			USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'The window is how many earlier points of the series a new point is compared with.';
	END IF;
	IF m = 'ttest' AND NOT (thr > 0 AND thr < 1) THEN
		RAISE EXCEPTION 'threshold must lie strictly between 0 and 1 for method ttest, got %', thr
			USING ERRCODE = 'invalid_parameter_value', DETAIL = 'It is the prediction interval''s confidence level (default 0.99).';
	END IF;
	IF m <> 'ttest' AND NOT (thr > 0 AND thr < 'Infinity'::float8) THEN
		RAISE EXCEPTION 'threshold must be a positive number for method %, got %', m, thr USING ERRCODE = 'invalid_parameter_value',
			DETAIL = CASE m WHEN 'zscore' THEN 'It is the z-score above which a point is flagged (default 5).'
			                ELSE 'It is the slowdown in percent that is flagged (default 5).' END;
	END IF;
	IF min_change_pct IS NULL OR NOT (min_change_pct >= 0 AND min_change_pct < 'Infinity'::float8) THEN
		RAISE EXCEPTION 'min_change_pct must be a number of percent, 0 or more, got %', coalesce(min_change_pct::text, 'NULL')
			USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'A flagged point must also be slower than its baseline by this much (default 1).';
	END IF;
	p := coalesce(persistence, CASE m WHEN 'ttest' THEN 2 ELSE 1 END);
	IF p < 1 OR p > 100 OR (m = 'changepoint' AND p <> 1) THEN
		RAISE EXCEPTION 'persistence must be between 1 and 100 (1 for changepoint), got %', p USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'It is how many flagged points in a row open an alert (default 2 for ttest, 1 otherwise).';
	END IF;
	f := _kernelindex.series_filter(implementation, operation, mode, environment, workload);
	INSERT INTO kbench_alert_rules (name, family, operation, mode, device, workload_digest, method, window_size, threshold,
	                                min_change_pct, persistence, confirm)
	VALUES (name,
	        CASE WHEN f.impls IS NOT NULL THEN coalesce((SELECT min(i.name) FROM kbench_implementations i WHERE i.digest = ANY (f.impls)),
	                                                    f.impls[1]) END,
	        CASE WHEN f.ops IS NOT NULL THEN (SELECT min(o.name) FROM kbench_operations o WHERE o.digest = ANY (f.ops)) END,
	        kbench_alert_rule.mode, environment,
	        CASE WHEN f.wls IS NOT NULL THEN f.wls[1] END, m, w, thr, min_change_pct, p, coalesce(confirm, true))
	RETURNING * INTO ru;
	RETURN ru;
EXCEPTION WHEN unique_violation THEN
	RAISE EXCEPTION 'alert rule "%" already exists', name USING ERRCODE = 'duplicate_object',
		HINT = 'Drop it first with kbench_alert_rule_drop(name).';
END $$;
COMMENT ON FUNCTION kbench_alert_rule(text, text, text, text, text, text, text, int, float8, float8, int, boolean) IS 'define an alert rule: which series (NULL: any) and which method, window, threshold';

-- Drop a rule (its alerts stay).
CREATE OR REPLACE FUNCTION kbench_alert_rule_drop(name text) RETURNS boolean
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	DELETE FROM kbench_alert_rules ru WHERE ru.name = kbench_alert_rule_drop.name;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'unknown alert rule "%"', name USING ERRCODE = 'undefined_object',
			DETAIL = format('The rules are %s.', coalesce((SELECT string_agg(ru.name, ', ' ORDER BY ru.name) FROM kbench_alert_rules ru), 'none'));
	END IF;
	RETURN true;
END $$;

-- Run a rule over the history already there, oldest runs first (as if each
-- had just landed).  Returns how many alerts it opened.
CREATE OR REPLACE FUNCTION kbench_alert_scan(rule text) RETURNS int
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	ru kbench_alert_rules;
BEGIN
	SELECT * INTO ru FROM kbench_alert_rules WHERE name = rule;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'unknown alert rule "%"', rule USING ERRCODE = 'undefined_object',
			DETAIL = format('The rules are %s.', coalesce((SELECT string_agg(r.name, ', ' ORDER BY r.name) FROM kbench_alert_rules r), 'none'));
	END IF;
	RETURN _kernelindex.alert_check(ARRAY(
		SELECT r.digest FROM kbench_runs r
		  LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
		  LEFT JOIN kbench_workloads w ON w.digest = r.workload_digest
		  LEFT JOIN kbench_operations o ON o.digest = w.operation_digest
		 WHERE (ru.family IS NULL OR coalesce(i.name, r.implementation_digest) = ru.family)
		   AND (ru.operation IS NULL OR o.name = ru.operation)
		   AND (ru.workload_digest IS NULL OR r.workload_digest = ru.workload_digest)
		 ORDER BY r.observed_at, r.digest), ru.id, false);
END $$;

--------------------------------------------------------------------------
-- Privileges
--------------------------------------------------------------------------

-- Reading rules and alerts is for everyone, as the analytics are; rules are
-- for kbench_admin (they queue reruns for everyone); queuing sweeps for
-- kbench_user (acknowledging and suppressing: below).
GRANT SELECT ON kbench_alert_rules, kbench_alerts, kbench_alert_confirmations, kbench_alert_status TO PUBLIC;
REVOKE ALL ON FUNCTION kbench_alert_rule(text, text, text, text, text, text, text, int, float8, float8, int, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION kbench_alert_rule_drop(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION kbench_alert_scan(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_alert_rule(text, text, text, text, text, text, text, int, float8, float8, int, boolean) TO kbench_admin;
GRANT EXECUTE ON FUNCTION kbench_alert_rule_drop(text) TO kbench_admin;
GRANT EXECUTE ON FUNCTION kbench_alert_scan(text) TO kbench_admin;
REVOKE ALL ON FUNCTION _kernelindex.device_is(text, kbench_environments) FROM PUBLIC;
REVOKE ALL ON FUNCTION _kernelindex.mode_is(text, kbench_protocols) FROM PUBLIC;
-- Whether the statement being executed is a COPY FROM into the table rel,
-- named with its schema (pg_restore's and psql's restore of a dump: COPY
-- public.kbench_runs (...) FROM stdin).  Read from the executing portal's
-- parsed statement (src/continuous.c), not from the query's text: no
-- statement text makes a COPY TO, an ingest or a SELECT look like one, and a
-- COPY FROM into kbench_runs needs the right to write it (the owner's).
CREATE OR REPLACE FUNCTION _kernelindex.copying_into(rel oid) RETURNS boolean
	AS 'MODULE_PATHNAME', 'kbench__copying_into' LANGUAGE C VOLATILE STRICT;
REVOKE ALL ON FUNCTION _kernelindex.copying_into(oid) FROM PUBLIC;

-- The trigger that reads it, _kernelindex.alerts_after_insert, is
-- sql/code/52_confirmations.sql (with the judging of confirmation reruns).

-- Acknowledge an alert (seen, being handled) or suppress it (not to be
-- reported), with a reason, until a time: a finite one; NULL: for good, for
-- an acknowledgement only.  A suppression needs one, at most 90 days ahead
-- (suppress again to extend it).  Either lapses at until: the alert counts
-- as its verdict, or open, again.  Who: kbench_admin any alert; any other
-- role (a kbench_user) only an alert on a run of its own job, a job whose
-- owner is the session's role or a role it is a member of (issue 24, item 11).
CREATE OR REPLACE FUNCTION _kernelindex.alert_set(alert_id bigint, new_status text, reason text, until timestamptz) RETURNS kbench_alerts
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	a kbench_alerts;
	verb text := CASE new_status WHEN 'suppressed' THEN 'suppress' ELSE 'acknowledge' END;
BEGIN
	IF alert_id IS NULL THEN
		RAISE EXCEPTION 'an alert id is required' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF reason IS NULL OR btrim(reason) = '' THEN
		RAISE EXCEPTION 'a reason is required to % an alert', verb
			USING ERRCODE = 'invalid_parameter_value', DETAIL = 'The reason is kept with the alert for whoever looks at it next.';
	END IF;
	IF new_status = 'suppressed' AND until IS NULL THEN
		RAISE EXCEPTION 'a suppression needs an expiry' USING ERRCODE = 'invalid_parameter_value',
			HINT = 'Pass until => now() + interval ''7 days'', for example.';
	END IF;
	IF until IS NOT NULL AND NOT isfinite(until) THEN
		RAISE EXCEPTION 'until must be a finite time, got %', until USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'It is when the acknowledgement or suppression lapses.',
			HINT = CASE new_status WHEN 'suppressed' THEN 'A suppression lasts at most 90 days; suppress again to extend it.'
			                       ELSE 'Leave until NULL for an acknowledgement that does not lapse.' END;
	END IF;
	IF until IS NOT NULL AND until <= now() THEN
		RAISE EXCEPTION 'until must lie in the future' USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'It is when the acknowledgement or suppression lapses.';
	END IF;
	IF new_status = 'suppressed' AND until > now() + interval '90 days' THEN
		RAISE EXCEPTION 'a suppression lasts at most 90 days' USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'A suppressed alert does not block kbench_check until it lapses.',
			HINT = 'Suppress again before it lapses to extend it.';
	END IF;
	SELECT * INTO a FROM kbench_alerts al WHERE al.id = alert_id FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'alert % does not exist', alert_id USING ERRCODE = 'no_data_found';
	END IF;
	IF NOT pg_has_role(session_user, 'kbench_admin', 'MEMBER')
	   AND NOT EXISTS (SELECT 1 FROM kbench_jobs j JOIN pg_roles o ON o.rolname = j.owner
	                    WHERE j.run_digest = a.run_digest AND pg_has_role(session_user, o.oid, 'MEMBER')) THEN
		RAISE EXCEPTION 'permission denied to % alert %', verb, alert_id USING ERRCODE = 'insufficient_privilege',
			DETAIL = format('Alert %s is on run %s, which no job of role %s measured.', alert_id, a.run_digest, session_user),
			HINT = 'A kbench_user acknowledges and suppresses alerts on its own jobs'' runs; kbench_admin any alert.';
	END IF;
	UPDATE kbench_alerts al SET status = new_status, reason = alert_set.reason, until = alert_set.until,
	       changed_by = session_user, changed_at = now()
	 WHERE al.id = alert_id RETURNING * INTO a;
	PERFORM _kernelindex.alert_notify(a);
	RETURN a;
END $$;
REVOKE ALL ON FUNCTION _kernelindex.alert_set(bigint, text, text, timestamptz) FROM PUBLIC;

CREATE OR REPLACE FUNCTION kbench_alert_acknowledge(alert_id bigint, reason text, until timestamptz DEFAULT NULL) RETURNS kbench_alerts
	LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp
	RETURN _kernelindex.alert_set(alert_id, 'acknowledged', reason, until);
CREATE OR REPLACE FUNCTION kbench_alert_suppress(alert_id bigint, reason text, until timestamptz) RETURNS kbench_alerts
	LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp
	RETURN _kernelindex.alert_set(alert_id, 'suppressed', reason, until);
REVOKE ALL ON FUNCTION kbench_alert_acknowledge(bigint, text, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION kbench_alert_suppress(bigint, text, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_alert_acknowledge(bigint, text, timestamptz) TO kbench_user;
GRANT EXECUTE ON FUNCTION kbench_alert_suppress(bigint, text, timestamptz) TO kbench_user;
