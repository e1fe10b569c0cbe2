-- Continuous benchmarking, what decides whether a landing is a restore and
-- who silences alerts (issue 24, items 7 and 11), over the tables of
-- sql/50_continuous.sql; CREATE OR REPLACE, so that the upgrade from 0.2.0
-- runs this part as it is (sql/updates/0.2.0--0.3.0/42_*.sql).

-- Whether the statement being executed is a COPY FROM into the table rel,
-- named with its schema (pg_restore's and psql's restore of a dump: COPY
-- public.kbench_runs (...) FROM stdin).  Read from the executing portal's
-- parsed statement (src/continuous.c), not from the query's text: no
-- statement text makes a COPY TO, an ingest or a SELECT look like one, and a
-- COPY FROM into kbench_runs needs the right to write it (the owner's).
CREATE OR REPLACE FUNCTION kbench__copying_into(rel oid) RETURNS boolean
	AS 'MODULE_PATHNAME', 'kbench__copying_into' LANGUAGE C VOLATILE STRICT;
REVOKE ALL ON FUNCTION kbench__copying_into(oid) FROM PUBLIC;

-- The trigger that reads it, kbench__alerts_after_insert, is
-- sql/51_confirmations.sql (with the judging of confirmation reruns).

-- Acknowledge an alert (seen, being handled) or suppress it (not to be
-- reported), with a reason, until a time: a finite one; NULL: for good, for
-- an acknowledgement only.  A suppression needs one, at most 90 days ahead
-- (suppress again to extend it).  Either lapses at until: the alert counts
-- as its verdict, or open, again.  Who: kbench_admin any alert; any other
-- role (a kbench_user) only an alert on a run of its own job, a job whose
-- owner is the session's role or a role it is a member of (issue 24, item 11).
CREATE OR REPLACE FUNCTION kbench__alert_set(alert_id bigint, new_status text, reason text, until timestamptz) RETURNS kbench_alerts
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
	UPDATE kbench_alerts al SET status = new_status, reason = kbench__alert_set.reason, until = kbench__alert_set.until,
	       changed_by = session_user, changed_at = now()
	 WHERE al.id = alert_id RETURNING * INTO a;
	PERFORM kbench__alert_notify(a);
	RETURN a;
END $$;
REVOKE ALL ON FUNCTION kbench__alert_set(bigint, text, text, timestamptz) FROM PUBLIC;

CREATE OR REPLACE FUNCTION kbench_alert_acknowledge(alert_id bigint, reason text, until timestamptz DEFAULT NULL) RETURNS kbench_alerts
	LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp
	RETURN kbench__alert_set(alert_id, 'acknowledged', reason, until);
CREATE OR REPLACE FUNCTION kbench_alert_suppress(alert_id bigint, reason text, until timestamptz) RETURNS kbench_alerts
	LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp
	RETURN kbench__alert_set(alert_id, 'suppressed', reason, until);
REVOKE ALL ON FUNCTION kbench_alert_acknowledge(bigint, text, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION kbench_alert_suppress(bigint, text, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_alert_acknowledge(bigint, text, timestamptz) TO kbench_user;
GRANT EXECUTE ON FUNCTION kbench_alert_suppress(bigint, text, timestamptz) TO kbench_user;
