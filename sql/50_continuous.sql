-- Continuous benchmarking (docs/ANALYTICS.md, "Continuous benchmarking"):
-- alert rules and alerts kept as runs land, confirmation reruns, change
-- points, the CI gate, sweeps queued in one call.  The arithmetic is C
-- (src/continuous.c).

--------------------------------------------------------------------------
-- Change points
--------------------------------------------------------------------------

-- Segment a series into steps: PELT under a Gaussian mean-shift cost, the
-- noise sigma from the median absolute successive difference, a penalty per
-- segment in units of sigma^2 (default 3 ln n), segments of at least
-- min_size points, steps under min_change_pct merged away.  Returns the
-- 1-based first point of every segment but the first.
CREATE FUNCTION kbench_segment(series_values float8[], penalty float8 DEFAULT NULL, min_size int DEFAULT 5,
                               min_change_pct float8 DEFAULT 1)
	RETURNS int[] AS 'MODULE_PATHNAME', 'kbench_segment' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION kbench_segment(float8[], float8, int, float8) IS 'change points of a series (PELT, penalty 3 ln n in noise variances, min segment 5, steps under 1% merged): the first point of each new segment';

-- One new point against the previous points of its series, as an alert
-- rule's method says (src/continuous.c).
CREATE FUNCTION kbench__judge(method text, series float8[], threshold float8, min_change_pct float8,
                              window_size int, persistence int,
                              OUT flagged boolean, OUT baseline_ns float8, OUT statistic float8, OUT critical float8,
                              OUT compared int, OUT change_at int)
	AS 'MODULE_PATHNAME', 'kbench__judge' LANGUAGE C IMMUTABLE PARALLEL SAFE;
REVOKE ALL ON FUNCTION kbench__judge(text, float8[], float8, float8, int, int) FROM PUBLIC;

-- What users name, resolved once for the series functions (errors as
-- kbench_regressions raises them).
CREATE FUNCTION kbench__series_filter(implementation text, operation text, mode text, environment text, in_workload text,
                                      OUT impls text[], OUT ops text[], OUT protos text[], OUT envs text[], OUT wls text[])
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
BEGIN
	IF operation IS NOT NULL THEN
		ops := kbench__resolve_operation(operation);
	END IF;
	IF implementation IS NOT NULL THEN
		impls := kbench__resolve_implementation(ops, implementation);
		impls := ARRAY(SELECT DISTINCT i.digest FROM kbench_implementations i
		                WHERE i.digest = ANY (impls)
		                   OR i.name IN (SELECT j.name FROM kbench_implementations j WHERE j.digest = ANY (impls)));
		IF impls = '{}' THEN
			impls := kbench__resolve_implementation(ops, implementation);
		END IF;
	END IF;
	protos := kbench__resolve_protocols(mode);
	envs := kbench__resolve_environments(environment);
	IF in_workload IS NOT NULL THEN
		SELECT array_agg(w.digest) INTO wls FROM kbench_workloads w WHERE w.name = in_workload OR w.digest = in_workload;
		IF wls IS NULL THEN
			RAISE EXCEPTION 'unknown workload "%"', in_workload USING ERRCODE = 'undefined_object',
				DETAIL = 'No workload in the catalog has that name or digest.';
		END IF;
	END IF;
END $$;
REVOKE ALL ON FUNCTION kbench__series_filter(text, text, text, text, text) FROM PUBLIC;

-- The mean of v[a:b] (1-based, inclusive).
CREATE FUNCTION kbench__slice_mean(v float8[], a int, b int) RETURNS float8
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN (SELECT avg(x) FROM unnest(v[a:b]) x);

-- The steps of each series (an implementation family in one cohort) that the
-- filters select: where each new segment starts, the means before and after.
-- operation_key, pass: the operation's short name and the timed pass, as
-- kbench_regressions gives them.
CREATE FUNCTION kbench_change_points(implementation text, operation text DEFAULT NULL, mode text DEFAULT NULL,
                                     environment text DEFAULT NULL, in_workload text DEFAULT NULL,
                                     penalty float8 DEFAULT NULL, min_size int DEFAULT 5, min_change_pct float8 DEFAULT 1)
	RETURNS TABLE (family text, workload text, protocol text, device text,
	               point int, run_digest text, observed_at timestamptz, version text, previous_version text,
	               before_ns float8, after_ns float8, change_pct float8, direction text,
	               points_before int, points_after int,
	               workload_digest text, protocol_digest text, environment_digest text,
	               operation_key text, pass text)
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp SET jit = off STABLE AS $$
#variable_conflict use_column
DECLARE
	f record;
BEGIN
	IF implementation IS NULL AND operation IS NULL AND in_workload IS NULL THEN
		RAISE EXCEPTION 'an implementation, an operation or a workload is required' USING ERRCODE = 'null_value_not_allowed',
			HINT = 'For example kbench_change_points(''liger'', ''layer_norm'').';
	END IF;
	PERFORM kbench_segment('{}', penalty, min_size, min_change_pct);   -- the arguments' checks
	f := kbench__series_filter(implementation, operation, mode, environment, in_workload);
	IF f.ops IS NOT NULL THEN
		-- the operation as its workloads: an index scan of their runs, not a semi-join over every run
		f.wls := ARRAY(SELECT w.digest FROM kbench_workloads w
		                WHERE w.operation_digest = ANY (f.ops) AND (f.wls IS NULL OR w.digest = ANY (f.wls)));
		f.ops := NULL;
	END IF;
	RETURN QUERY
	WITH s AS (
		SELECT p.wd, p.pd, p.ed, p.fam, array_agg(p.x ORDER BY p.oa, p.rd) AS xs, array_agg(p.rd ORDER BY p.oa, p.rd) AS rds,
		       array_agg(p.oa ORDER BY p.oa, p.rd) AS oas
		  FROM kbench__points(f.impls, f.ops, f.protos, f.envs, false, f.wls) p
		 GROUP BY p.wd, p.pd, p.ed, p.fam
	), c AS (
		SELECT s.*, cp.pt, cp.k, cps
		  FROM s CROSS JOIN LATERAL (SELECT kbench_segment(s.xs, penalty, min_size, min_change_pct) AS cps) g
		  CROSS JOIN LATERAL unnest(g.cps) WITH ORDINALITY AS cp(pt, k)
	), m AS (
		SELECT c.*, coalesce(c.cps[c.k - 1], 1) AS a, coalesce(c.cps[c.k + 1], cardinality(c.xs) + 1) AS b FROM c
	)
	SELECT m.fam, wl.name, pr.name, concat_ws(' ', e.product, e.form_factor),
	       m.pt, m.rds[m.pt], m.oas[m.pt], kbench_run_version(m.rds[m.pt]), kbench_run_version(m.rds[m.pt - 1]),
	       kbench__slice_mean(m.xs, m.a, m.pt - 1), kbench__slice_mean(m.xs, m.pt, m.b - 1),
	       round(((kbench__slice_mean(m.xs, m.pt, m.b - 1) / kbench__slice_mean(m.xs, m.a, m.pt - 1) - 1) * 100)::numeric, 2)::float8,
	       CASE WHEN kbench__slice_mean(m.xs, m.pt, m.b - 1) > kbench__slice_mean(m.xs, m.a, m.pt - 1) THEN 'slower' ELSE 'faster' END,
	       m.pt - m.a, m.b - m.pt, m.wd, m.pd, m.ed, kbench__op_key(o.name), kbench_protocol_mode(pr.name)
	  FROM m
	  LEFT JOIN kbench_workloads wl ON wl.digest = m.wd
	  LEFT JOIN kbench_operations o ON o.digest = wl.operation_digest
	  LEFT JOIN kbench_protocols pr ON pr.digest = m.pd
	  LEFT JOIN kbench_environments e ON e.digest = m.ed
	 ORDER BY m.fam, wl.name, pr.name, 4, m.pt;
END $$;
COMMENT ON FUNCTION kbench_change_points(text, text, text, text, text, float8, int, float8) IS 'steps along each series (implementation family in one cohort): PELT change points with the means before and after';

--------------------------------------------------------------------------
-- Alert rules and alerts
--------------------------------------------------------------------------

-- A rule watches the series it selects (NULL: any) with one method.
CREATE TABLE kbench_alert_rules (
	id serial PRIMARY KEY,
	name text NOT NULL UNIQUE,
	family text,                          -- kbench_implementations.name (or a digest not in the catalog)
	operation text,                       -- kbench_operations.name
	mode text,                            -- forward, backward, full, or a protocol's name or digest
	device text,                          -- as kbench_regressions' environment: product, product and form factor, name, digest
	workload_digest text,                 -- one cohort family: its workload
	method text NOT NULL CHECK (method IN ('percent', 'zscore', 'ttest', 'changepoint')),
	window_size int NOT NULL CHECK (window_size BETWEEN 1 AND 1000),
	threshold float8 NOT NULL,
	min_change_pct float8 NOT NULL DEFAULT 1 CHECK (min_change_pct >= 0),
	persistence int NOT NULL DEFAULT 1 CHECK (persistence BETWEEN 1 AND 100), -- flagged points in a row to alert
	confirm boolean NOT NULL DEFAULT true, -- queue a confirmation rerun when an alert opens
	enabled boolean NOT NULL DEFAULT true,
	seeded boolean NOT NULL DEFAULT false,
	created_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE kbench_alert_rules IS 'what series to watch (family, operation, mode, device, workload; NULL: any) and how: percent, zscore, ttest or changepoint';

-- The default rules, on every series: a 5% slowdown against the median of
-- the previous 10 points, and a step of more than 3% among the last 50.  They
-- only alert (confirm = false): a server does not start rerunning anything
-- nobody asked for; rules made with kbench_alert_rule() confirm by default.
INSERT INTO kbench_alert_rules (name, method, window_size, threshold, min_change_pct, confirm, seeded) VALUES
	('default-percent', 'percent', 10, 5, 1, false, true),
	('default-changepoint', 'changepoint', 50, 3, 1, false, true);

-- An alert: one episode of a rule flagging one series.  runs are the
-- flagged points folded into it (a window straddling a step keeps flagging
-- for a while); run_digest is the first (for changepoint: where the new
-- segment starts).
CREATE TABLE kbench_alerts (
	id bigserial PRIMARY KEY,
	rule_id int NOT NULL,                 -- kbench_alert_rules.id (no FK: a dump restores in any order)
	workload_digest text NOT NULL,
	protocol_digest text NOT NULL,
	environment_digest text NOT NULL,
	family text NOT NULL,
	run_digest text NOT NULL,
	previous_run_digest text,
	last_run_digest text NOT NULL,
	runs text[] NOT NULL,
	method text NOT NULL,
	value_ns float8 NOT NULL,
	baseline_ns float8,
	change_pct float8,
	statistic float8,
	critical float8,
	compared int,
	status text NOT NULL DEFAULT 'open'
		CHECK (status IN ('open', 'acknowledged', 'suppressed', 'confirmed', 'refuted')),
	verdict text CHECK (verdict IN ('confirmed', 'refuted')),   -- the confirmation rerun's
	reason text,                          -- why it was acknowledged or suppressed
	until timestamptz,                    -- when the acknowledgement or suppression lapses
	changed_by name,
	opened_at timestamptz NOT NULL DEFAULT now(),
	changed_at timestamptz,
	UNIQUE (rule_id, workload_digest, protocol_digest, environment_digest, family, run_digest)
);
CREATE INDEX ON kbench_alerts (workload_digest, protocol_digest, environment_digest, family);
CREATE INDEX ON kbench_alerts (status);
COMMENT ON TABLE kbench_alerts IS 'alerts: one per rule and episode of a series, open / acknowledged / suppressed / confirmed / refuted';

-- The confirmation rerun of an alert: the job queued, then its verdict.
CREATE TABLE kbench_alert_confirmations (
	alert_id bigint PRIMARY KEY,          -- kbench_alerts.id
	job_id bigint,                        -- kbench_jobs.id; NULL when none could be queued (error says why)
	queued_at timestamptz NOT NULL DEFAULT now(),
	run_digest text,                      -- the rerun's run
	value_ns float8,
	change_pct float8,                    -- the rerun against the alert's baseline
	verdict text CHECK (verdict IN ('confirmed', 'refuted')),
	judged_at timestamptz,
	error text
);
CREATE INDEX ON kbench_alert_confirmations (job_id) WHERE verdict IS NULL;
COMMENT ON TABLE kbench_alert_confirmations IS 'confirmation reruns queued when alerts opened, and their verdicts';

SELECT pg_catalog.pg_extension_config_dump('kbench_alert_rules', 'WHERE NOT seeded');
SELECT pg_catalog.pg_extension_config_dump('kbench_alert_rules_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_alerts', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_alerts_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_alert_confirmations', '');

-- An alert's status now: an acknowledgement or suppression whose time ran
-- out falls back to the verdict, else open.
CREATE FUNCTION kbench_alert_effective_status(a kbench_alerts) RETURNS text
	LANGUAGE sql STABLE
	RETURN CASE WHEN a.status IN ('acknowledged', 'suppressed') AND a.until <= now() THEN coalesce(a.verdict, 'open')
	            ELSE a.status END;

-- Alerts with what they name and their confirmation.
CREATE VIEW kbench_alert_status AS
SELECT a.id, kbench_alert_effective_status(a) AS status, a.status AS recorded_status, ru.name AS rule, a.method,
       a.family, o.name AS operation, kbench_protocol_mode(p.name) AS mode, w.name AS workload, w.axes,
       concat_ws(' ', e.product, e.form_factor) AS device,
       a.run_digest, r.observed_at, kbench_run_version(a.run_digest) AS version,
       kbench_run_version(a.previous_run_digest) AS previous_version,
       a.value_ns, a.baseline_ns, a.change_pct, a.statistic, a.critical, cardinality(a.runs) AS points,
       a.verdict, c.job_id AS confirmation_job, c.value_ns AS confirmation_ns, c.change_pct AS confirmation_change_pct,
       c.error AS confirmation_error, a.reason, a.until, a.changed_by, a.opened_at, a.changed_at,
       a.workload_digest, a.protocol_digest, a.environment_digest, a.rule_id,
       kbench__op_key(o.name) AS operation_key, kbench__device_key(e) AS device_key
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
CREATE FUNCTION kbench__device_is(device text, e kbench_environments) RETURNS boolean
	LANGUAGE sql IMMUTABLE
	RETURN device IS NULL OR device = e.digest OR device = e.name
	    OR lower(e.product) IN (lower(device), 'nvidia ' || lower(device))
	    OR lower(e.product || ' ' || e.form_factor) IN (lower(device), 'nvidia ' || lower(device));

-- Whether a mode named in a rule is the protocol's.
CREATE FUNCTION kbench__mode_is(mode text, p kbench_protocols) RETURNS boolean
	LANGUAGE sql IMMUTABLE
	RETURN mode IS NULL OR CASE WHEN mode IN ('forward', 'backward', 'full') THEN kbench_protocol_mode(p.name) = mode
	                            ELSE mode IN (p.name, p.digest) END;

CREATE FUNCTION kbench__alert_notify(a kbench_alerts) RETURNS void
	LANGUAGE sql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	SELECT pg_notify('kbench_alerts', json_build_object('id', a.id, 'status', a.status, 'rule_id', a.rule_id,
	                 'family', a.family, 'run_digest', a.run_digest, 'change_pct', round(a.change_pct::numeric, 2))::text)
$$;
REVOKE ALL ON FUNCTION kbench__alert_notify(kbench_alerts) FROM PUBLIC;

-- Queue the confirmation rerun of a new alert, when this server can rerun
-- its series: a job here produced one of the series' runs (so the
-- implementation runs here, on the alert's environment) on a device a
-- worker serves.  That job's request is queued again.
CREATE FUNCTION kbench__queue_confirmation(a kbench_alerts) RETURNS void
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
		IF NOT EXISTS (SELECT 1 FROM kbench__workers() w WHERE w.device = src.device) THEN
			RAISE EXCEPTION 'no worker serves device %', src.device;
		END IF;
		job := kbench_run(src.operation, src.mode, src.workload, src.implementation, src.device, src.protocol);
		INSERT INTO kbench_alert_confirmations (alert_id, job_id) VALUES (a.id, job);
	EXCEPTION WHEN OTHERS THEN
		INSERT INTO kbench_alert_confirmations (alert_id, error) VALUES (a.id, SQLERRM);
	END;
END $$;
REVOKE ALL ON FUNCTION kbench__queue_confirmation(kbench_alerts) FROM PUBLIC;

-- A confirmation rerun landed (the worker stores the run of the job it is
-- running): confirmed when it reproduces at least half the alert's slowdown
-- (and the rule's min_change_pct) against the alert's baseline, else
-- refuted.  An alert still open takes the verdict as its status.
CREATE FUNCTION kbench__judge_confirmation(c kbench_alert_confirmations, run kbench_runs) RETURNS void
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
	v := CASE WHEN run.status = 'passed' AND run.primary_ns IS NOT NULL
	               AND pct >= greatest(a.change_pct / 2,
	                                   coalesce((SELECT min_change_pct FROM kbench_alert_rules WHERE id = a.rule_id), 0))
	          THEN 'confirmed' ELSE 'refuted' END;
	UPDATE kbench_alert_confirmations SET run_digest = run.digest, value_ns = run.primary_ns, change_pct = pct,
	       verdict = v, judged_at = now()
	 WHERE alert_id = c.alert_id;
	UPDATE kbench_alerts SET verdict = v, status = CASE WHEN status = 'open' THEN v ELSE status END, changed_at = now()
	 WHERE id = a.id RETURNING * INTO a;
	PERFORM kbench__alert_notify(a);
END $$;
REVOKE ALL ON FUNCTION kbench__judge_confirmation(kbench_alert_confirmations, kbench_runs) FROM PUBLIC;

-- Check runs against the enabled rules: each competing run against the
-- previous points of its series (those observed before it), as its rules'
-- methods say.  A run that lands after later-observed runs of its series
-- (an import out of time order) changes their baselines: up to 10 of those
-- later runs are judged again with it (rejudge).  A flagged run joins the rule's alert on the series when that
-- alert's last flagged run is among the previous min(window, 20) points
-- (changepoint: when the alert's change point is in the window); otherwise
-- it opens an alert: NOTIFY kbench_alerts, and a confirmation rerun when the
-- rule asks and this server can rerun it.  Returns the alerts opened.
CREATE FUNCTION kbench__alert_check(landed text[], only_rule int DEFAULT NULL, rejudge boolean DEFAULT true) RETURNS int
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
			       o.name AS opname, p, e
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
			          AND kbench__mode_is(ru.mode, n.p) AND kbench__device_is(ru.device, n.e)) mr
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
		SELECT mp.digest, mp.wd, mp.pd, mp.ed, mp.oa, mp.x, mp.fam, mp.rule_id, mp.method, mp.window_size, mp.confirm,
		       mp.all_rds[mp.first:] AS rds, mp.all_rds[mp.first:] || mp.digest AS upto, j.*
		  FROM mp
		  CROSS JOIN LATERAL kbench__judge(mp.method, mp.all_xs[mp.first:] || mp.x, mp.threshold, mp.min_change_pct,
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
			PERFORM kbench__alert_notify(a);
			IF c.confirm THEN
				PERFORM kbench__queue_confirmation(a);
			END IF;
		END IF;
	END LOOP;
	RETURN opened;
END $$;
REVOKE ALL ON FUNCTION kbench__alert_check(text[], int, boolean) FROM PUBLIC;

-- A series' points in time order within a cohort: the checks read the
-- points before a new run (and after it, for runs landing out of order)
-- along it, across the cohort's families, instead of every run of the cohort.
CREATE INDEX kbench_runs_cohort_time_idx ON kbench_runs (workload_digest, protocol_digest, environment_digest, observed_at, digest);

-- The trigger that judges confirmation reruns and checks every other run
-- as it lands (kbench__alerts_after_insert) is sql/51_confirmations.sql;
-- who silences alerts, and what a restore is, sql/50_continuous_alerts.sql.

-- Define an alert rule.  implementation, operation, mode, environment and
-- workload select the series (NULL: any), named as kbench_regressions takes
-- them.  method: percent (threshold: slowdown %, default 5, window 10),
-- zscore (z, 5, window 100), ttest (confidence, 0.99, window 64),
-- changepoint (step %, 3, window 50).  Existing history is not scanned: kbench_alert_scan(name) does that.
CREATE FUNCTION kbench_alert_rule(name text, method text DEFAULT 'percent', implementation text DEFAULT NULL,
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
	f := kbench__series_filter(implementation, operation, mode, environment, workload);
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
CREATE FUNCTION kbench_alert_rule_drop(name text) RETURNS boolean
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
CREATE FUNCTION kbench_alert_scan(rule text) RETURNS int
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	ru kbench_alert_rules;
BEGIN
	SELECT * INTO ru FROM kbench_alert_rules WHERE name = rule;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'unknown alert rule "%"', rule USING ERRCODE = 'undefined_object',
			DETAIL = format('The rules are %s.', coalesce((SELECT string_agg(r.name, ', ' ORDER BY r.name) FROM kbench_alert_rules r), 'none'));
	END IF;
	RETURN kbench__alert_check(ARRAY(
		SELECT r.digest FROM kbench_runs r
		  LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
		  LEFT JOIN kbench_workloads w ON w.digest = r.workload_digest
		  LEFT JOIN kbench_operations o ON o.digest = w.operation_digest
		 WHERE (ru.family IS NULL OR coalesce(i.name, r.implementation_digest) = ru.family)
		   AND (ru.operation IS NULL OR o.name = ru.operation)
		   AND (ru.workload_digest IS NULL OR r.workload_digest = ru.workload_digest)
		 ORDER BY r.observed_at, r.digest), ru.id, false);
END $$;

-- Acknowledging and suppressing: sql/50_continuous_alerts.sql.

--------------------------------------------------------------------------
-- The CI gate
--------------------------------------------------------------------------

-- The alerts that a gate or a summary selects: effective status open or
-- confirmed (blocking), the others too when all.
CREATE FUNCTION kbench__gate_alerts(implementation text, operation text, mode text, environment text, since timestamptz)
	RETURNS SETOF kbench_alert_status
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
DECLARE
	f record;
BEGIN
	f := kbench__series_filter(implementation, operation, mode, environment, NULL);
	RETURN QUERY
	SELECT s.* FROM kbench_alert_status s
	 WHERE (f.impls IS NULL OR s.family IN (SELECT i.name FROM kbench_implementations i WHERE i.digest = ANY (f.impls))
	                        OR s.family = ANY (f.impls))
	   AND (f.ops IS NULL OR s.workload_digest IN (SELECT w.digest FROM kbench_workloads w WHERE w.operation_digest = ANY (f.ops)))
	   AND (f.protos IS NULL OR s.protocol_digest = ANY (f.protos))
	   AND (f.envs IS NULL OR s.environment_digest = ANY (f.envs))
	   AND (since IS NULL OR s.opened_at >= since)
	 ORDER BY s.id;
END $$;

-- The gate itself (kbench_check): sql/50_continuous_check.sql.

-- The Markdown summary (kbench_summary_markdown): sql/50_continuous_summary.sql.

--------------------------------------------------------------------------
-- Sweeps: the cartesian product of axis values queued in one call
--------------------------------------------------------------------------

-- grid: {"rows": [1024, 4096], "hidden": [256, 512, 1024], "dtype": "fp32"}
-- (a scalar is one value).  implementations: NULL for the device's own, or
-- a list.  One kbench_run per combination; returns the job ids in order.
CREATE FUNCTION kbench_sweep_run(operation text, mode text, grid jsonb, implementations text[] DEFAULT NULL,
                                 device text DEFAULT NULL, protocol jsonb DEFAULT '{}')
	RETURNS SETOF bigint
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	combos jsonb[] := ARRAY['{}'::jsonb];
	k text;
	v jsonb;
	vals jsonb;
	impl text;
	wl jsonb;
	nimpl int := coalesce(cardinality(implementations), 1);
BEGIN
	IF grid IS NULL OR jsonb_typeof(grid) <> 'object' OR grid = '{}' THEN
		RAISE EXCEPTION 'grid must be a JSON object of axis values' USING ERRCODE = 'invalid_parameter_value',
			HINT = 'For example {"rows": [1024, 4096], "hidden": [256, 512], "dtype": "fp32"}.';
	END IF;
	IF implementations = '{}' OR array_position(implementations, NULL) IS NOT NULL THEN
		RAISE EXCEPTION 'implementations must be NULL or a list of names' USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'An empty list or a NULL element would queue nothing for it.';
	END IF;
	FOR k, vals IN SELECT e.key, e.value FROM jsonb_each(grid) e ORDER BY e.key LOOP
		IF jsonb_typeof(vals) <> 'array' THEN
			vals := jsonb_build_array(vals);
		END IF;
		IF jsonb_array_length(vals) = 0 THEN
			RAISE EXCEPTION 'axis "%" of the grid has no values', k USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF cardinality(combos) * jsonb_array_length(vals) * nimpl > 10000 THEN
			RAISE EXCEPTION 'the sweep has more than 10000 jobs' USING ERRCODE = 'program_limit_exceeded',
				DETAIL = 'A sweep queues one job per combination of axis values and implementation.';
		END IF;
		combos := ARRAY(SELECT c || jsonb_build_object(k, x) FROM unnest(combos) WITH ORDINALITY AS u(c, i),
		                       jsonb_array_elements(vals) WITH ORDINALITY AS a(x, j) ORDER BY u.i, a.j);
	END LOOP;
	FOREACH impl IN ARRAY coalesce(implementations, ARRAY[NULL::text]) LOOP
		FOREACH wl IN ARRAY combos LOOP
			RETURN NEXT kbench_run(operation, mode, wl, impl, device, protocol);
		END LOOP;
	END LOOP;
END $$;
COMMENT ON FUNCTION kbench_sweep_run(text, text, jsonb, text[], text, jsonb) IS 'queue the cartesian product of a grid of axis values (and implementations); returns the job ids';

--------------------------------------------------------------------------
-- Paired A/B comparisons
--------------------------------------------------------------------------

-- A comparison: ONE job that times A and B interleaved on one device
-- (kernels/compare.c): both sides set up with the same inputs (the
-- protocol's seed), warmed up, then rounds of a block of A's calls and a
-- block of B's, the cache flushed before every timed call.  The worker
-- stores both runs (each with its raw samples) and fills in the result in
-- the transaction that finishes the job.
CREATE TABLE kbench_comparisons (
	id bigserial PRIMARY KEY,
	operation text NOT NULL,
	mode text NOT NULL,
	workload jsonb NOT NULL,
	a text,                               -- implementation A (NULL: the device's own)
	b text,
	device text NOT NULL,
	protocol jsonb NOT NULL,
	rounds int NOT NULL CHECK (rounds BETWEEN 3 AND 1000),
	same_pct float8 NOT NULL CHECK (same_pct > 0),
	job_id bigint NOT NULL,               -- the one job that times both (kbench_jobs.id)
	owner name NOT NULL,
	queued_at timestamptz NOT NULL DEFAULT now(),
	-- stored by the worker with the two runs:
	a_run text,                           -- kbench_runs.digest of A's run
	b_run text,
	call_order text,                      -- the blocks as they ran, one letter each: 'ABAB...'
	calls_per_block int,                  -- timed calls in each block
	a_round_ns float8[],                  -- each round's median, A's
	b_round_ns float8[],
	a_median_ns float8,                   -- the median of the rounds' medians
	b_median_ns float8,
	ratio float8,                         -- b_median_ns / a_median_ns
	ratio_low float8,                     -- its 95% interval (bootstrap over rounds)
	ratio_high float8,
	verdict text CHECK (verdict IN ('faster', 'slower', 'same', 'ambiguous')),
	finished_at timestamptz
);
CREATE INDEX ON kbench_comparisons (job_id);
COMMENT ON TABLE kbench_comparisons IS 'paired A/B comparisons: one job times A and B in alternating blocks on one device';
-- Written by kbench_compare (as the extension's owner) and the worker;
-- everyone reads them.
SELECT pg_catalog.pg_extension_config_dump('kbench_comparisons', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_comparisons_id_seq', '');

-- Queue a paired comparison of implementations a and b: one job; returns
-- the comparison's id.  Validated as kbench_run validates (both sides).
--   SELECT kbench_compare('layer_norm', 'backward', '{"rows": 4096, "hidden": 4096, "dtype": "bf16"}', 'cuda', 'cuda/v2');
CREATE FUNCTION kbench_compare(operation text, mode text, workload jsonb, a text, b text, rounds int DEFAULT 10,
                               device text DEFAULT NULL, protocol jsonb DEFAULT '{}', same_pct float8 DEFAULT 2,
                               timeout interval DEFAULT NULL, max_minutes float8 DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'kbench_compare' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION kbench_compare(text, text, jsonb, text, text, int, text, jsonb, float8, interval, float8) IS 'queue a paired A/B comparison: one job times A and B interleaved on one device; read it with kbench_comparison(id)';

-- The paired statistics of kernels/stats.c (kb_paired_ratio), the one
-- routine the worker, kbench compare and this use: the ratio of medians
-- B / A over rounds, its 95% interval by a bootstrap over rounds (2,000
-- resamples of whole rounds; deterministic) and the verdict for B: faster
-- (the interval lies below 1 - same_pct/100), slower (above 1 +
-- same_pct/100), same (inside 1 -+ same_pct/100), else ambiguous.
CREATE FUNCTION kbench_paired_ratio(a_ns float8[], b_ns float8[], same_pct float8 DEFAULT 2,
	OUT a_median_ns float8, OUT b_median_ns float8, OUT ratio float8, OUT ratio_low float8, OUT ratio_high float8,
	OUT verdict text)
	AS 'MODULE_PATHNAME', 'kbench_paired_ratio' LANGUAGE C IMMUTABLE;
COMMENT ON FUNCTION kbench_paired_ratio(float8[], float8[], float8) IS 'paired A/B statistics over per-round times: ratio of medians B/A, its bootstrap 95% interval over rounds, the verdict for B';

-- A comparison's result, as the worker stored it; status follows its job:
-- queued, running, done (both runs passed), failed (a side did not pass, or
-- the job failed), timeout, canceled.  rounds_done counts the rounds timed.
CREATE FUNCTION kbench_comparison(comparison_id bigint,
	OUT id bigint, OUT status text, OUT rounds_done int, OUT a_median_ns float8, OUT b_median_ns float8,
	OUT ratio float8, OUT ratio_low float8, OUT ratio_high float8, OUT verdict text,
	OUT a_run text, OUT b_run text, OUT call_order text, OUT job_id bigint)
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
DECLARE
	c kbench_comparisons;
	j kbench_jobs;
BEGIN
	SELECT * INTO c FROM kbench_comparisons x WHERE x.id = comparison_id;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'comparison % does not exist', comparison_id USING ERRCODE = 'no_data_found',
			HINT = 'kbench_comparisons lists the comparisons.';
	END IF;
	-- the job is read as the caller (row-level security): its owner sees its state
	SELECT * INTO j FROM kbench_jobs x WHERE x.id = c.job_id;
	id := c.id;
	job_id := c.job_id;
	status := CASE WHEN c.finished_at IS NOT NULL THEN
	                    CASE WHEN c.verdict IS NOT NULL THEN 'done' WHEN j.status IN ('timeout', 'canceled') THEN j.status ELSE 'failed' END
	               WHEN j.status IN ('queued', 'running') THEN j.status
	               WHEN j.status IS NOT NULL THEN j.status
	               ELSE 'unknown' END;
	rounds_done := coalesce(cardinality(c.a_round_ns), 0);
	a_median_ns := c.a_median_ns;
	b_median_ns := c.b_median_ns;
	ratio := c.ratio;
	ratio_low := c.ratio_low;
	ratio_high := c.ratio_high;
	verdict := c.verdict;
	a_run := c.a_run;
	b_run := c.b_run;
	call_order := c.call_order;
END $$;
COMMENT ON FUNCTION kbench_comparison(bigint) IS 'a paired comparison''s result: medians, ratio B/A with a bootstrap 95% interval over rounds, verdict faster / slower / same / ambiguous';

-- Two providers compared across every operation that has both, in one
-- call, from the history: per operation, protocol and device, the geometric
-- mean of kbench_speedup's speedups (baseline / candidate; above 1: the
-- candidate is faster) and how many workloads each side wins strictly (the
-- 95% interval of the difference excludes zero, as kbench_records ranks) or
-- within noise.  operation_key, pass: the operation's short name and the
-- timed pass, as kbench_speedup gives them.
CREATE FUNCTION kbench_compare_providers(baseline text, candidate text, mode text DEFAULT NULL, environment text DEFAULT NULL)
	RETURNS TABLE (operation text, protocol text, device text, workloads bigint, geomean_speedup float8,
	               min_speedup float8, max_speedup float8, candidate_faster bigint, baseline_faster bigint, within_noise bigint,
	               operation_key text, pass text)
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
#variable_conflict use_column
DECLARE
	op text;
	found_any boolean := false;
BEGIN
	IF baseline IS NULL OR candidate IS NULL THEN
		RAISE EXCEPTION 'a baseline and a candidate are required' USING ERRCODE = 'null_value_not_allowed',
			HINT = 'Name two providers, e.g. kbench_compare_providers(''huggingface'', ''liger'').';
	END IF;
	PERFORM kbench__resolve_protocols(mode), kbench__resolve_environments(environment);
	FOR op IN SELECT o.name FROM kbench_operations o GROUP BY o.name ORDER BY o.name LOOP
		BEGIN
			RETURN QUERY
			SELECT op, s.protocol, s.device, count(*), kbench_geomean(s.speedup), min(s.speedup), max(s.speedup),
			       count(*) FILTER (WHERE d.diff > d.half_c),
			       count(*) FILTER (WHERE -d.diff > d.half_b),
			       count(*) FILTER (WHERE NOT d.diff > d.half_c AND NOT -d.diff > d.half_b),
			       kbench__op_key(op), kbench_protocol_mode(s.protocol)
			  FROM kbench_speedup(op, baseline, candidate, mode, environment) s
			  JOIN kbench_runs rb ON rb.digest = s.baseline_run
			  JOIN kbench_runs rc ON rc.digest = s.candidate_run
			  CROSS JOIN LATERAL (
			       SELECT (rb.primary_ns - rc.primary_ns)::float8 AS diff,
			              -- the candidate strictly faster: b - c beyond b's lower and c's upper half-widths
			              sqrt(greatest(rb.primary_ns - (kbench_run_spread(rb)).low_ns, 0)::float8 ^ 2
			                   + greatest((kbench_run_spread(rc)).high_ns - rc.primary_ns, 0)::float8 ^ 2) AS half_c,
			              sqrt(greatest(rc.primary_ns - (kbench_run_spread(rc)).low_ns, 0)::float8 ^ 2
			                   + greatest((kbench_run_spread(rb)).high_ns - rb.primary_ns, 0)::float8 ^ 2) AS half_b) d
			 GROUP BY s.protocol, s.device
			 ORDER BY s.device, s.protocol;
			found_any := true;
		EXCEPTION WHEN undefined_object OR ambiguous_parameter THEN
			NULL;                              -- the operation lacks one of the two
		END;
	END LOOP;
	IF NOT found_any THEN
		RAISE EXCEPTION 'no operation has both "%" and "%"', baseline, candidate USING ERRCODE = 'undefined_object',
			HINT = 'Name providers as kbench_speedup takes them: an implementation name, its provider (huggingface, torch, liger) or title.';
	END IF;
END $$;
COMMENT ON FUNCTION kbench_compare_providers(text, text, text, text) IS 'two providers across every operation that has both: geomean speedup per operation, protocol and device, and strict wins by the difference rule';

--------------------------------------------------------------------------
-- Ranking by the difference
--------------------------------------------------------------------------

-- kbench_records ranks by the 95% interval of the difference between two
-- implementations' bests, as kernelindex.dev's ranking rules say: b is
-- strictly slower than a only when (b - a) minus the half-widths facing each
-- other, combined in quadrature, is still above zero:
--   (b.primary - a.primary) > sqrt((b.primary - b.low)^2 + (a.high - a.primary)^2)
-- where low..high is the run's spread (the 95% interval of the median from
-- raw samples where present, else p20..p80).  rank = 1 + the number of
-- implementations strictly faster; ties_leader: not strictly slower than the
-- leader.  diff_low_ns..diff_high_ns: that interval of (this - the leader).
-- The 0.1.0 rule (spreads overlapping the leader's share rank 1; else 1 +
-- the number whose spread lies wholly below) stays in overlap_rank and
-- overlap_ties_leader.
CREATE OR REPLACE VIEW kbench_records AS
SELECT b.workload_digest, b.protocol_digest, b.environment_digest,
       o.name AS operation, kbench_protocol_mode(p.name) AS mode, w.name AS workload, w.axes,
       kbench__float_dtype(w.dtypes) AS dtype, e.product, e.form_factor,
       b.implementation_digest, i.name AS implementation,
       b.run_digest, b.primary_ns, b.low_ns, b.high_ns, b.observed_at,
       1 + (SELECT count(*) FROM kbench_cohort_bests c
             WHERE c.workload_digest = b.workload_digest AND c.protocol_digest = b.protocol_digest
               AND c.environment_digest = b.environment_digest
               AND b.primary_ns - c.primary_ns > sqrt(greatest(b.primary_ns - b.low_ns, 0)::float8 ^ 2
                                                      + greatest(c.high_ns - c.primary_ns, 0)::float8 ^ 2)) AS rank,
       b.run_digest = l.run_digest AS leader,
       b.run_digest <> l.run_digest
         AND NOT b.primary_ns - l.primary_ns > sqrt(greatest(b.primary_ns - b.low_ns, 0)::float8 ^ 2
                                                    + greatest(l.high_ns - l.primary_ns, 0)::float8 ^ 2) AS ties_leader,
       round(b.primary_ns::numeric / l.primary_ns, 3) AS vs_leader,
       round(b.primary_ns - l.primary_ns - sqrt(greatest(b.primary_ns - b.low_ns, 0)::float8 ^ 2
                                                + greatest(l.high_ns - l.primary_ns, 0)::float8 ^ 2))::bigint AS diff_low_ns,
       round(b.primary_ns - l.primary_ns + sqrt(greatest(b.high_ns - b.primary_ns, 0)::float8 ^ 2
                                                + greatest(l.primary_ns - l.low_ns, 0)::float8 ^ 2))::bigint AS diff_high_ns,
       CASE WHEN b.low_ns <= l.high_ns AND l.low_ns <= b.high_ns THEN 1
            ELSE 1 + (SELECT count(*) FROM kbench_cohort_bests c
                       WHERE c.workload_digest = b.workload_digest AND c.protocol_digest = b.protocol_digest
                         AND c.environment_digest = b.environment_digest AND c.high_ns < b.low_ns) END AS overlap_rank,
       b.run_digest <> l.run_digest AND b.low_ns <= l.high_ns AND l.low_ns <= b.high_ns AS overlap_ties_leader,
       kbench__op_key(o.name) AS operation_key, kbench__device_key(e) AS device_key
  FROM kbench_cohort_bests b
  CROSS JOIN LATERAL (SELECT c.run_digest, c.primary_ns, c.low_ns, c.high_ns FROM kbench_cohort_bests c
                       WHERE c.workload_digest = b.workload_digest AND c.protocol_digest = b.protocol_digest
                         AND c.environment_digest = b.environment_digest
                       ORDER BY c.primary_ns, c.observed_at, c.run_digest LIMIT 1) l
  LEFT JOIN kbench_workloads w ON w.digest = b.workload_digest
  LEFT JOIN kbench_operations o ON o.digest = w.operation_digest
  LEFT JOIN kbench_protocols p ON p.digest = b.protocol_digest
  LEFT JOIN kbench_environments e ON e.digest = b.environment_digest
  LEFT JOIN kbench_implementations i ON i.digest = b.implementation_digest;
COMMENT ON VIEW kbench_records IS 'per cohort, each implementation''s best competing run; rank = 1 + the implementations strictly faster (95% interval of the difference above zero); the 0.1.0 overlap rule in overlap_rank';

-- kbench_leaders names the implementations tied with each record the same
-- way (the overlap rule's in overlap_tied_implementations).
CREATE OR REPLACE VIEW kbench_leaders AS
SELECT l.workload_digest, l.protocol_digest, l.environment_digest,
       o.name AS operation, kbench_protocol_mode(p.name) AS mode, w.name AS workload, w.axes,
       e.product, e.form_factor, l.implementation_digest, i.name AS implementation,
       l.run_digest, l.primary_ns, l.low_ns, l.high_ns, l.observed_at,
       ARRAY(SELECT c.implementation_digest FROM kbench_cohort_bests c
              WHERE c.workload_digest = l.workload_digest AND c.protocol_digest = l.protocol_digest
                AND c.environment_digest = l.environment_digest AND c.run_digest <> l.run_digest
                AND NOT c.primary_ns - l.primary_ns > sqrt(greatest(c.primary_ns - c.low_ns, 0)::float8 ^ 2
                                                           + greatest(l.high_ns - l.primary_ns, 0)::float8 ^ 2)
              ORDER BY c.primary_ns) AS tied_implementations,
       ARRAY(SELECT c.implementation_digest FROM kbench_cohort_bests c
              WHERE c.workload_digest = l.workload_digest AND c.protocol_digest = l.protocol_digest
                AND c.environment_digest = l.environment_digest AND c.run_digest <> l.run_digest
                AND c.low_ns <= l.high_ns AND l.low_ns <= c.high_ns
              ORDER BY c.primary_ns) AS overlap_tied_implementations,
       kbench__op_key(o.name) AS operation_key, kbench__device_key(e) AS device_key
  FROM (SELECT DISTINCT ON (b.workload_digest, b.protocol_digest, b.environment_digest) b.*
          FROM kbench_cohort_bests b
         ORDER BY b.workload_digest, b.protocol_digest, b.environment_digest, b.primary_ns, b.observed_at, b.run_digest) l
  LEFT JOIN kbench_workloads w ON w.digest = l.workload_digest
  LEFT JOIN kbench_operations o ON o.digest = w.operation_digest
  LEFT JOIN kbench_protocols p ON p.digest = l.protocol_digest
  LEFT JOIN kbench_environments e ON e.digest = l.environment_digest
  LEFT JOIN kbench_implementations i ON i.digest = l.implementation_digest;
COMMENT ON VIEW kbench_leaders IS 'each cohort''s record: the leading run and the implementations not strictly slower (95% interval of the difference); the overlap rule''s ties in overlap_tied_implementations';
-- Reading the records is for everyone, as reading the catalog is.
GRANT SELECT ON kbench_records, kbench_leaders TO PUBLIC;

--------------------------------------------------------------------------
-- Privileges
--------------------------------------------------------------------------

-- Reading rules and alerts is for everyone, as the analytics are; rules are
-- for kbench_admin (they queue reruns for everyone); queuing sweeps for
-- kbench_user (acknowledging and suppressing: sql/50_continuous_alerts.sql).
GRANT SELECT ON kbench_alert_rules, kbench_alerts, kbench_alert_confirmations, kbench_alert_status TO PUBLIC;
REVOKE ALL ON FUNCTION kbench_alert_rule(text, text, text, text, text, text, text, int, float8, float8, int, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION kbench_alert_rule_drop(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION kbench_alert_scan(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_alert_rule(text, text, text, text, text, text, text, int, float8, float8, int, boolean) TO kbench_admin;
GRANT EXECUTE ON FUNCTION kbench_alert_rule_drop(text) TO kbench_admin;
GRANT EXECUTE ON FUNCTION kbench_alert_scan(text) TO kbench_admin;
REVOKE ALL ON FUNCTION kbench_sweep_run(text, text, jsonb, text[], text, jsonb) FROM PUBLIC;
REVOKE ALL ON FUNCTION kbench_compare(text, text, jsonb, text, text, int, text, jsonb, float8, interval, float8) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_compare(text, text, jsonb, text, text, int, text, jsonb, float8, interval, float8) TO kbench_user;
GRANT SELECT ON kbench_comparisons TO PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_sweep_run(text, text, jsonb, text[], text, jsonb) TO kbench_user;
REVOKE ALL ON FUNCTION kbench__gate_alerts(text, text, text, text, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION kbench__slice_mean(float8[], int, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION kbench__device_is(text, kbench_environments) FROM PUBLIC;
REVOKE ALL ON FUNCTION kbench__mode_is(text, kbench_protocols) FROM PUBLIC;
