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

-- A series' points in time order within a cohort: the checks read the
-- points before a new run (and after it, for runs landing out of order)
-- along it, across the cohort's families, instead of every run of the cohort.
CREATE INDEX kbench_runs_cohort_time_idx ON kbench_runs (workload_digest, protocol_digest, environment_digest, observed_at, digest);
