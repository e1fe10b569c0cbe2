-- Analytics over history (docs/ANALYTICS.md): cohorts, records and their
-- history, speedups against a baseline, regressions, roofline, sweeps.
--
-- A cohort is (workload digest, protocol digest, environment digest): the
-- workload fixes the operation, the bound sizes and dtypes, and the
-- correctness policy; the implementation is what a cohort compares.  Only
-- competing runs count: status 'passed', not retracted, not superseded,
-- with a primary statistic in ns.

--------------------------------------------------------------------------
-- Small helpers
--------------------------------------------------------------------------

-- The short operation key of an operation name: 'liger-layer-norm' -> 'layer_norm'.
CREATE FUNCTION kbench__op_key(name text) RETURNS text
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN regexp_replace(replace(lower(name), '-', '_'), '^liger_', '');

-- The timed pass a protocol names: its name ends with forward, backward or full
-- (liger-bench-do-bench-backward, kbench-cuda-layer-norm-backward).
CREATE FUNCTION kbench_protocol_mode(protocol_name text) RETURNS text
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN substring(protocol_name FROM '(forward|backward|full)$');
COMMENT ON FUNCTION kbench_protocol_mode(text) IS 'the timed pass (forward, backward, full) a protocol''s name ends with, or NULL';

-- The floating-point dtype of a workload (its dtypes less the integer ones).
CREATE FUNCTION kbench__float_dtype(dtypes text[]) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN (SELECT d FROM unnest(dtypes) d
	         WHERE d IN ('fp64', 'fp32', 'tf32', 'bf16', 'fp16', 'fp8_e4m3', 'fp8_e5m2', 'fp8')
	         ORDER BY array_position(ARRAY['fp64', 'fp32', 'tf32', 'bf16', 'fp16', 'fp8_e4m3', 'fp8_e5m2', 'fp8'], d)
	         LIMIT 1);

CREATE FUNCTION kbench__dtype_bytes(dtype text) RETURNS int
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN CASE WHEN dtype = 'fp64' THEN 8 WHEN dtype IN ('fp32', 'tf32') THEN 4
	            WHEN dtype IN ('bf16', 'fp16') THEN 2 WHEN dtype LIKE 'fp8%' THEN 1 END;

-- A workload's axes as numbers in axis-name order, for sorting sweeps.
CREATE FUNCTION kbench__axes_key(axes jsonb) RETURNS numeric[]
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN (SELECT array_agg(CASE WHEN jsonb_typeof(value) = 'number' THEN value::numeric END ORDER BY key)
	          FROM jsonb_each(coalesce(axes, '{}')));

-- Slug form (as the Liger import names things): 'Hugging Face' -> 'hugging-face'.
CREATE FUNCTION kbench__slug(s text) RETURNS text
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN btrim(regexp_replace(lower(s), '[^a-z0-9]+', '-', 'g'), '-');

-- The spread a run competes with: its 95% interval of the median when raw
-- samples were kept (and the interval is there), else p20..p80, else the
-- primary statistic alone.
CREATE FUNCTION kbench_run_spread(r kbench_runs, OUT low_ns bigint, OUT high_ns bigint)
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN (SELECT ROW(CASE WHEN r.raw_samples_ns IS NOT NULL AND r.ci95_low_ns IS NOT NULL AND r.ci95_high_ns IS NOT NULL
	                        THEN least(r.ci95_low_ns, r.primary_ns) ELSE least(coalesce(r.p20_ns, r.primary_ns), r.primary_ns) END,
	                   CASE WHEN r.raw_samples_ns IS NOT NULL AND r.ci95_low_ns IS NOT NULL AND r.ci95_high_ns IS NOT NULL
	                        THEN greatest(r.ci95_high_ns, r.primary_ns) ELSE greatest(coalesce(r.p80_ns, r.primary_ns), r.primary_ns) END));
COMMENT ON FUNCTION kbench_run_spread(kbench_runs) IS 'the interval a run competes with: ci95 of the median when it has raw samples, else p20..p80, else the primary statistic';

-- Whether a run competes: passed, not retracted, not superseded, timed.
CREATE FUNCTION kbench_competes(r kbench_runs) RETURNS boolean
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL;
COMMENT ON FUNCTION kbench_competes(kbench_runs) IS 'true for a run that takes part in comparisons: passed, not retracted, not superseded, with a primary statistic in ns';

--------------------------------------------------------------------------
-- Resolving what users name (errors say what exists)
--------------------------------------------------------------------------

-- The digests of an operation named by its name ('liger-layer-norm'), its
-- short name ('layer_norm', as kbench and Liger's scripts say) or its digest.
CREATE FUNCTION kbench__resolve_operation(operation text) RETURNS text[]
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
DECLARE
	found text[];
BEGIN
	IF operation IS NULL OR btrim(operation) = '' THEN
		RAISE EXCEPTION 'an operation is required' USING ERRCODE = 'null_value_not_allowed',
			HINT = 'Name one, e.g. ''layer_norm'' or ''liger-layer-norm''.';
	END IF;
	SELECT array_agg(digest ORDER BY digest) INTO found FROM kbench_operations WHERE name = operation OR digest = operation;
	IF found IS NULL THEN
		SELECT array_agg(digest ORDER BY digest) INTO found FROM kbench_operations
		 WHERE name = 'liger-' || replace(lower(operation), '_', '-');
	END IF;
	IF found IS NULL THEN
		RAISE EXCEPTION 'unknown operation "%"', operation USING ERRCODE = 'undefined_object',
			DETAIL = format('No operation in the catalog is named %L or %L.', operation, 'liger-' || replace(lower(operation), '_', '-')),
			HINT = 'List them with SELECT DISTINCT name FROM kbench_operations ORDER BY 1.';
	END IF;
	RETURN found;
END $$;

-- The digests of an implementation of one of the operations: by digest, by
-- name, by provider ('huggingface' for liger-bench-layer-norm-huggingface) or
-- by the provider's title after ' · ' ('Transformers').  role names the
-- argument in errors.  All digests returned share one name.
CREATE FUNCTION kbench__resolve_implementation(op_digests text[], implementation text, role text DEFAULT NULL)
	RETURNS text[] LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
DECLARE
	found text[];
	names text[];
BEGIN
	IF implementation IS NULL OR btrim(implementation) = '' THEN
		RAISE EXCEPTION 'a %implementation is required', coalesce(role || ' ', '') USING ERRCODE = 'null_value_not_allowed';
	END IF;
	SELECT array_agg(digest ORDER BY digest), array_agg(DISTINCT name) INTO found, names
	  FROM kbench_implementations
	 WHERE (op_digests IS NULL OR operation_digest = ANY (op_digests))
	   AND (digest = implementation OR name = implementation);
	IF found IS NULL AND op_digests IS NOT NULL THEN
		SELECT array_agg(digest ORDER BY digest), array_agg(DISTINCT name) INTO found, names
		  FROM kbench_implementations
		 WHERE operation_digest = ANY (op_digests)
		   AND (name LIKE '%-' || kbench__slug(implementation)
		        OR lower(split_part(manifest->'metadata'->>'title', ' · ', 2)) = lower(implementation));
	END IF;
	IF found IS NULL AND op_digests IS NULL AND implementation ~ '^sha256:[0-9a-f]{64}$'
	   AND EXISTS (SELECT 1 FROM kbench_runs WHERE implementation_digest = implementation) THEN
		RETURN ARRAY[implementation];         -- runs naming an implementation not (yet) in the catalog
	END IF;
	IF found IS NULL THEN
		RAISE EXCEPTION 'unknown %implementation "%"', coalesce(role || ' ', ''), implementation USING ERRCODE = 'undefined_object',
			DETAIL = CASE WHEN op_digests IS NULL THEN 'No implementation in the catalog has that name or digest.'
			              ELSE format('The operation''s implementations are %s.',
			                          (SELECT string_agg(DISTINCT name, ', ') FROM kbench_implementations
			                            WHERE operation_digest = ANY (op_digests))) END,
			HINT = 'Name an implementation by its name, its digest or its provider (e.g. huggingface, torch, liger).';
	END IF;
	IF cardinality(names) > 1 THEN
		RAISE EXCEPTION '%implementation "%" is ambiguous', coalesce(role || ' ', ''), implementation USING ERRCODE = 'ambiguous_parameter',
			DETAIL = format('It matches %s.', array_to_string(names, ', ')),
			HINT = 'Name the implementation in full.';
	END IF;
	RETURN found;
END $$;

-- The protocol digests of a timed pass ('forward', 'backward', 'full') or of a
-- protocol named by name or digest; NULL for any.
CREATE FUNCTION kbench__resolve_protocols(mode text) RETURNS text[]
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
DECLARE
	found text[];
BEGIN
	IF mode IS NULL THEN
		RETURN NULL;
	END IF;
	SELECT array_agg(digest ORDER BY digest) INTO found FROM kbench_protocols
	 WHERE CASE WHEN mode IN ('forward', 'backward', 'full') THEN kbench_protocol_mode(name) = mode
	            ELSE name = mode OR digest = mode END;
	IF found IS NULL THEN
		RAISE EXCEPTION 'unknown mode "%"', mode USING ERRCODE = 'undefined_object',
			DETAIL = 'A mode is forward, backward or full, or the name or digest of a protocol in the catalog.',
			HINT = 'List the protocols with SELECT name FROM kbench_protocols ORDER BY 1.';
	END IF;
	RETURN found;
END $$;

-- The environment digests of a device: an environment's digest or name, a
-- product ('NVIDIA H100', or 'H100'), or product and form factor
-- ('NVIDIA H100 80GB HBM3'); NULL for any.
CREATE FUNCTION kbench__resolve_environments(environment text) RETURNS text[]
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
DECLARE
	found text[];
BEGIN
	IF environment IS NULL THEN
		RETURN NULL;
	END IF;
	SELECT array_agg(digest ORDER BY digest) INTO found FROM kbench_environments
	 WHERE digest = environment OR name = environment
	    OR lower(product) IN (lower(environment), 'nvidia ' || lower(environment))
	    OR lower(product || ' ' || form_factor) IN (lower(environment), 'nvidia ' || lower(environment));
	IF found IS NULL THEN
		RAISE EXCEPTION 'unknown environment "%"', environment USING ERRCODE = 'undefined_object',
			DETAIL = 'No environment in the catalog has that digest, name, product, or product and form factor.',
			HINT = 'List them with SELECT DISTINCT product, form_factor FROM kbench_environments ORDER BY 1, 2.';
	END IF;
	RETURN found;
END $$;

--------------------------------------------------------------------------
-- Cohorts
--------------------------------------------------------------------------

CREATE TYPE kbench_cohort AS (
	workload_digest text,
	protocol_digest text,
	environment_digest text
);
COMMENT ON TYPE kbench_cohort IS 'the comparison key: workload (operation, sizes, dtypes, correctness policy), protocol and environment digests';

CREATE FUNCTION kbench_cohort_of(run_digest text) RETURNS kbench_cohort
	LANGUAGE sql STABLE
	RETURN (SELECT ROW(workload_digest, protocol_digest, environment_digest)::kbench_cohort
	          FROM kbench_runs WHERE digest = run_digest);
COMMENT ON FUNCTION kbench_cohort_of(text) IS 'the cohort (comparison key) of a run';

-- Every competing run with its cohort and what names it.
CREATE VIEW kbench_cohort_runs AS
SELECT r.workload_digest, r.protocol_digest, r.environment_digest,
       o.name AS operation, kbench_protocol_mode(p.name) AS mode, w.name AS workload, w.axes,
       kbench__float_dtype(w.dtypes) AS dtype,
       e.product, e.form_factor,
       r.implementation_digest, i.name AS implementation, i.version,
       r.digest AS run_digest, r.observed_at, r.primary_statistic, r.primary_ns, r.p20_ns, r.p80_ns,
       (kbench_run_spread(r)).low_ns, (kbench_run_spread(r)).high_ns
  FROM kbench_runs r
  LEFT JOIN kbench_workloads w ON w.digest = r.workload_digest
  LEFT JOIN kbench_operations o ON o.digest = w.operation_digest
  LEFT JOIN kbench_protocols p ON p.digest = r.protocol_digest
  LEFT JOIN kbench_environments e ON e.digest = r.environment_digest
  LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
 WHERE r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL;
COMMENT ON VIEW kbench_cohort_runs IS 'competing runs (passed, unretracted, not superseded) with their cohort key and names';

CREATE VIEW kbench_cohorts AS
SELECT workload_digest, protocol_digest, environment_digest, operation, mode, workload, axes, dtype,
       product, form_factor,
       count(*) AS runs, count(DISTINCT implementation_digest) AS implementations,
       min(observed_at) AS first_observed_at, max(observed_at) AS last_observed_at
  FROM kbench_cohort_runs
 GROUP BY workload_digest, protocol_digest, environment_digest, operation, mode, workload, axes, dtype, product, form_factor;
COMMENT ON VIEW kbench_cohorts IS 'comparison cohorts (workload, protocol, environment) with how many competing runs and implementations they hold';

--------------------------------------------------------------------------
-- Records: the best competing run per cohort and implementation, kept by
-- triggers on kbench_runs, and the history of each cohort's leader.
--------------------------------------------------------------------------

-- Derived state, maintained by the triggers below (not dumped: restoring
-- kbench_runs rebuilds it).
CREATE TABLE kbench_cohort_bests (
	workload_digest text NOT NULL,
	protocol_digest text NOT NULL,
	environment_digest text NOT NULL,
	implementation_digest text NOT NULL,
	run_digest text NOT NULL,
	primary_ns bigint NOT NULL,
	low_ns bigint NOT NULL,
	high_ns bigint NOT NULL,
	observed_at timestamptz NOT NULL,
	PRIMARY KEY (workload_digest, protocol_digest, environment_digest, implementation_digest)
);
COMMENT ON TABLE kbench_cohort_bests IS 'derived: each implementation''s best competing run per cohort (lowest primary_ns, then earliest, then digest)';

CREATE TABLE kbench_record_history (
	id bigserial PRIMARY KEY,
	workload_digest text NOT NULL,
	protocol_digest text NOT NULL,
	environment_digest text NOT NULL,
	run_digest text,                      -- the new leader; NULL when no competing run is left
	implementation_digest text,
	primary_ns bigint,
	previous_run_digest text,             -- the leader it displaced
	previous_primary_ns bigint,
	at timestamptz NOT NULL,              -- the new leader's observed_at (the withdrawal's time when none is left)
	cause text NOT NULL CHECK (cause IN ('first', 'faster', 'retracted', 'superseded')),
	recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ON kbench_record_history (workload_digest, protocol_digest, environment_digest, id);
CREATE INDEX ON kbench_record_history (run_digest);
COMMENT ON TABLE kbench_record_history IS 'each cohort''s leaders in the order they appeared: first, faster (beat the leader), retracted / superseded (the leader was withdrawn)';
-- The history says in what order things happened, which the runs alone
-- cannot: pg_dump keeps it (ids and recorded_at included).  pg_restore
-- loads it before kbench_runs (table data in name order), and the records
-- trigger then adds nothing to it (see kbench__records_after_insert).
SELECT pg_catalog.pg_extension_config_dump('kbench_record_history', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_record_history_id_seq', '');

-- After runs are inserted (one statement of the store: kbench_ingest, the
-- imports, the runner): update each implementation's best in its cohort
-- and append to the record history every run that beats the cohort's
-- leader (lower primary_ns; on a tie the earlier run, then the smaller
-- digest, keeps the lead).  Runs are taken in the order they arrive, so a
-- statement gives the history that inserting its runs one by one would.
-- Once per statement: the whole Liger CSV costs a few statements, not one
-- call per run.  The cohorts touched are locked (advisory transaction
-- locks on 64 buckets of cohorts, taken in order, so a transaction holds
-- at most 64) before their leaders are read, so two transactions storing
-- the first runs of a new cohort at once give one 'first'.
-- A restore (pg_dump keeps the history) loads the history before the runs:
-- no restored run beats the leader the history ends with, so the restore
-- adds nothing to it.
CREATE FUNCTION kbench__records_after_insert() RETURNS trigger
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp SET work_mem = '64MB' AS $$
BEGIN
	PERFORM pg_catalog.pg_advisory_xact_lock(27497, k)
	   FROM (SELECT DISTINCT pg_catalog.hashtext(n.workload_digest || n.protocol_digest || n.environment_digest) & 63 AS k
	           FROM kbench_new_runs n
	          WHERE n.status = 'passed' AND n.retracted_at IS NULL AND n.superseded_by IS NULL AND n.primary_ns IS NOT NULL) c
	  ORDER BY k;
	INSERT INTO kbench_cohort_bests AS b (workload_digest, protocol_digest, environment_digest, implementation_digest,
	                                      run_digest, primary_ns, low_ns, high_ns, observed_at)
	SELECT DISTINCT ON (n.workload_digest, n.protocol_digest, n.environment_digest, n.implementation_digest)
	       n.workload_digest, n.protocol_digest, n.environment_digest, n.implementation_digest,
	       n.digest, n.primary_ns, sp.low_ns, sp.high_ns, n.observed_at
	  FROM kbench_new_runs n CROSS JOIN LATERAL kbench_run_spread(n) sp
	 WHERE n.status = 'passed' AND n.retracted_at IS NULL AND n.superseded_by IS NULL AND n.primary_ns IS NOT NULL
	 ORDER BY n.workload_digest, n.protocol_digest, n.environment_digest, n.implementation_digest,
	          n.primary_ns, n.observed_at, n.digest
	ON CONFLICT (workload_digest, protocol_digest, environment_digest, implementation_digest) DO UPDATE
	   SET run_digest = excluded.run_digest, primary_ns = excluded.primary_ns, low_ns = excluded.low_ns,
	       high_ns = excluded.high_ns, observed_at = excluded.observed_at
	 WHERE (excluded.primary_ns, excluded.observed_at, excluded.run_digest) < (b.primary_ns, b.observed_at, b.run_digest);
	WITH c AS (
		-- the competing runs in arrival order, each with its place in key order
		SELECT n.*, row_number() OVER (PARTITION BY n.workload_digest, n.protocol_digest, n.environment_digest
		                               ORDER BY n.primary_ns, n.observed_at, n.digest) AS place
		  FROM (SELECT row_number() OVER () AS arrival, n.workload_digest, n.protocol_digest, n.environment_digest,
		               n.implementation_digest, n.digest, n.primary_ns, n.observed_at, n.status, n.retracted_at, n.superseded_by
		          FROM kbench_new_runs n) n
		 WHERE n.status = 'passed' AND n.retracted_at IS NULL AND n.superseded_by IS NULL AND n.primary_ns IS NOT NULL),
	-- a run leads when it beats the leader and every run of the statement before it
	rec AS (
		SELECT c.*, l.run_digest AS leader_digest, l.primary_ns AS leader_ns
		  FROM (SELECT c.*, min(c.place) OVER (PARTITION BY c.workload_digest, c.protocol_digest, c.environment_digest
		                                       ORDER BY c.arrival ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS best_before
		          FROM c) c
		  LEFT JOIN LATERAL (
		        SELECT h.run_digest, h.primary_ns, h.at FROM kbench_record_history h
		         WHERE h.workload_digest = c.workload_digest AND h.protocol_digest = c.protocol_digest
		           AND h.environment_digest = c.environment_digest
		         ORDER BY h.id DESC LIMIT 1) l ON true
		 WHERE (c.best_before IS NULL OR c.place < c.best_before)
		   AND (l.run_digest IS NULL OR (c.primary_ns, c.observed_at, c.digest) < (l.primary_ns, l.at, l.run_digest)))
	INSERT INTO kbench_record_history (workload_digest, protocol_digest, environment_digest, run_digest,
	                                   implementation_digest, primary_ns, previous_run_digest, previous_primary_ns, at, cause)
	SELECT r.workload_digest, r.protocol_digest, r.environment_digest, r.digest, r.implementation_digest, r.primary_ns,
	       p.digest, p.ns, r.observed_at, CASE WHEN p.digest IS NULL THEN 'first' ELSE 'faster' END
	  FROM (SELECT r.*,
	               lag(r.digest) OVER w AS prev_digest, lag(r.primary_ns) OVER w AS prev_ns,
	               row_number() OVER w AS k
	          FROM rec r
	        WINDOW w AS (PARTITION BY r.workload_digest, r.protocol_digest, r.environment_digest ORDER BY r.arrival)) r
	 CROSS JOIN LATERAL (SELECT CASE WHEN r.k = 1 THEN r.leader_digest ELSE r.prev_digest END AS digest,
	                            CASE WHEN r.k = 1 THEN r.leader_ns ELSE r.prev_ns END AS ns) p
	 ORDER BY r.arrival;
	RETURN NULL;
END $$;

CREATE TRIGGER records AFTER INSERT ON kbench_runs REFERENCING NEW TABLE AS kbench_new_runs
	FOR EACH STATEMENT EXECUTE FUNCTION kbench__records_after_insert();

-- After a run is retracted or superseded: its implementation's best and, if
-- it led its cohort, the cohort's leader are recomputed.
CREATE FUNCTION kbench__records_after_withdrawal() RETURNS trigger
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp AS $$
DECLARE
	cur record;
	best record;
BEGIN
	IF OLD.status <> 'passed' OR OLD.primary_ns IS NULL OR OLD.retracted_at IS NOT NULL OR OLD.superseded_by IS NOT NULL THEN
		RETURN NULL;                        -- it was not competing
	END IF;
	IF EXISTS (SELECT 1 FROM kbench_cohort_bests b
	            WHERE b.workload_digest = OLD.workload_digest AND b.protocol_digest = OLD.protocol_digest
	              AND b.environment_digest = OLD.environment_digest AND b.implementation_digest = OLD.implementation_digest
	              AND b.run_digest = OLD.digest) THEN
		SELECT r.digest, r.primary_ns, (kbench_run_spread(r)).low_ns, (kbench_run_spread(r)).high_ns, r.observed_at INTO best
		  FROM kbench_runs r
		 WHERE r.workload_digest = OLD.workload_digest AND r.protocol_digest = OLD.protocol_digest
		   AND r.environment_digest = OLD.environment_digest AND r.implementation_digest = OLD.implementation_digest
		   AND r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL
		 ORDER BY r.primary_ns, r.observed_at, r.digest LIMIT 1;
		IF FOUND THEN
			UPDATE kbench_cohort_bests b SET run_digest = best.digest, primary_ns = best.primary_ns, low_ns = best.low_ns,
			       high_ns = best.high_ns, observed_at = best.observed_at
			 WHERE b.workload_digest = OLD.workload_digest AND b.protocol_digest = OLD.protocol_digest
			   AND b.environment_digest = OLD.environment_digest AND b.implementation_digest = OLD.implementation_digest;
		ELSE
			DELETE FROM kbench_cohort_bests b
			 WHERE b.workload_digest = OLD.workload_digest AND b.protocol_digest = OLD.protocol_digest
			   AND b.environment_digest = OLD.environment_digest AND b.implementation_digest = OLD.implementation_digest;
		END IF;
	END IF;
	SELECT h.run_digest INTO cur FROM kbench_record_history h
	 WHERE h.workload_digest = OLD.workload_digest AND h.protocol_digest = OLD.protocol_digest
	   AND h.environment_digest = OLD.environment_digest
	 ORDER BY h.id DESC LIMIT 1;
	IF FOUND AND cur.run_digest = OLD.digest THEN
		SELECT b.run_digest, b.implementation_digest, b.primary_ns, b.observed_at INTO best FROM kbench_cohort_bests b
		 WHERE b.workload_digest = OLD.workload_digest AND b.protocol_digest = OLD.protocol_digest
		   AND b.environment_digest = OLD.environment_digest
		 ORDER BY b.primary_ns, b.observed_at, b.run_digest LIMIT 1;
		INSERT INTO kbench_record_history (workload_digest, protocol_digest, environment_digest, run_digest,
		                                   implementation_digest, primary_ns, previous_run_digest, previous_primary_ns, at, cause)
		VALUES (OLD.workload_digest, OLD.protocol_digest, OLD.environment_digest, best.run_digest, best.implementation_digest,
		        best.primary_ns, OLD.digest, OLD.primary_ns,
		        coalesce(best.observed_at, NEW.retracted_at, now()),
		        CASE WHEN NEW.retracted_at IS NOT NULL AND OLD.retracted_at IS NULL THEN 'retracted' ELSE 'superseded' END);
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER records_withdrawal AFTER UPDATE OF retracted_at, superseded_by ON kbench_runs
	FOR EACH ROW
	WHEN ((OLD.retracted_at IS NULL AND NEW.retracted_at IS NOT NULL) OR (OLD.superseded_by IS NULL AND NEW.superseded_by IS NOT NULL))
	EXECUTE FUNCTION kbench__records_after_withdrawal();

-- Recompute the derived record tables from kbench_runs: after a bulk load
-- made with the trigger disabled (bench/synthetic_history.sql), or to start
-- afresh.  The history is replayed in (observed_at, digest) order from the
-- competing runs only, so it holds 'first' and 'faster' entries.
CREATE FUNCTION kbench_rebuild_records(OUT bests bigint, OUT history bigint)
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp AS $$
BEGIN
	LOCK TABLE kbench_runs IN SHARE MODE;
	TRUNCATE kbench_cohort_bests, kbench_record_history;
	INSERT INTO kbench_cohort_bests (workload_digest, protocol_digest, environment_digest, implementation_digest,
	                                 run_digest, primary_ns, low_ns, high_ns, observed_at)
	SELECT DISTINCT ON (r.workload_digest, r.protocol_digest, r.environment_digest, r.implementation_digest)
	       r.workload_digest, r.protocol_digest, r.environment_digest, r.implementation_digest,
	       r.digest, r.primary_ns, (kbench_run_spread(r)).low_ns, (kbench_run_spread(r)).high_ns, r.observed_at
	  FROM kbench_runs r
	 WHERE r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL
	 ORDER BY r.workload_digest, r.protocol_digest, r.environment_digest, r.implementation_digest,
	          r.primary_ns, r.observed_at, r.digest;
	GET DIAGNOSTICS bests = ROW_COUNT;
	INSERT INTO kbench_record_history (workload_digest, protocol_digest, environment_digest, run_digest,
	                                   implementation_digest, primary_ns, previous_run_digest, previous_primary_ns, at, cause)
	SELECT l.workload_digest, l.protocol_digest, l.environment_digest, l.digest, l.implementation_digest, l.primary_ns,
	       lag(l.digest) OVER c, lag(l.primary_ns) OVER c, l.observed_at,
	       CASE WHEN lag(l.digest) OVER c IS NULL THEN 'first' ELSE 'faster' END
	  FROM (SELECT r.workload_digest, r.protocol_digest, r.environment_digest, r.digest, r.implementation_digest,
	               r.primary_ns, r.observed_at,
	               min(r.primary_ns) OVER (PARTITION BY r.workload_digest, r.protocol_digest, r.environment_digest
	                                       ORDER BY r.observed_at, r.digest
	                                       ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_min
	          FROM kbench_runs r
	         WHERE r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL) l
	 WHERE l.before_min IS NULL OR l.primary_ns < l.before_min
	WINDOW c AS (PARTITION BY l.workload_digest, l.protocol_digest, l.environment_digest ORDER BY l.observed_at, l.digest)
	 ORDER BY l.observed_at, l.digest;
	GET DIAGNOSTICS history = ROW_COUNT;
END $$;
COMMENT ON FUNCTION kbench_rebuild_records() IS 'recompute kbench_cohort_bests and kbench_record_history from kbench_runs (after a bulk load with the records trigger disabled)';

-- The current records: for every cohort, each implementation's best run,
-- ranked.  An implementation whose spread overlaps the leader's shares rank
-- 1; any other's rank is 1 + the number of implementations whose spread lies
-- wholly below its own (standard competition ranking, noise-aware).
CREATE VIEW kbench_records AS
SELECT b.workload_digest, b.protocol_digest, b.environment_digest,
       o.name AS operation, kbench_protocol_mode(p.name) AS mode, w.name AS workload, w.axes,
       kbench__float_dtype(w.dtypes) AS dtype, e.product, e.form_factor,
       b.implementation_digest, i.name AS implementation,
       b.run_digest, b.primary_ns, b.low_ns, b.high_ns, b.observed_at,
       CASE WHEN b.low_ns <= l.high_ns AND l.low_ns <= b.high_ns THEN 1
            ELSE 1 + (SELECT count(*) FROM kbench_cohort_bests c
                       WHERE c.workload_digest = b.workload_digest AND c.protocol_digest = b.protocol_digest
                         AND c.environment_digest = b.environment_digest AND c.high_ns < b.low_ns) END AS rank,
       b.run_digest = l.run_digest AS leader,
       b.run_digest <> l.run_digest AND b.low_ns <= l.high_ns AND l.low_ns <= b.high_ns AS ties_leader,
       round(b.primary_ns::numeric / l.primary_ns, 3) AS vs_leader
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
COMMENT ON VIEW kbench_records IS 'per cohort, each implementation''s best competing run with a noise-aware rank (overlapping the leader''s spread shares rank 1)';

-- The record of each cohort alone: its leader, with the implementations
-- whose spread overlaps the leader's (they share the record).  What
-- "SELECT ... FROM kbench_records WHERE leader" answers, without ranking
-- every implementation first: one ordered index pass over the bests.
CREATE INDEX ON kbench_cohort_bests (workload_digest, protocol_digest, environment_digest, primary_ns, observed_at, run_digest);
CREATE VIEW kbench_leaders AS
SELECT l.workload_digest, l.protocol_digest, l.environment_digest,
       o.name AS operation, kbench_protocol_mode(p.name) AS mode, w.name AS workload, w.axes,
       e.product, e.form_factor, l.implementation_digest, i.name AS implementation,
       l.run_digest, l.primary_ns, l.low_ns, l.high_ns, l.observed_at,
       ARRAY(SELECT c.implementation_digest FROM kbench_cohort_bests c
              WHERE c.workload_digest = l.workload_digest AND c.protocol_digest = l.protocol_digest
                AND c.environment_digest = l.environment_digest AND c.run_digest <> l.run_digest
                AND c.low_ns <= l.high_ns AND l.low_ns <= c.high_ns
              ORDER BY c.primary_ns) AS tied_implementations
  FROM (SELECT DISTINCT ON (b.workload_digest, b.protocol_digest, b.environment_digest) b.*
          FROM kbench_cohort_bests b
         ORDER BY b.workload_digest, b.protocol_digest, b.environment_digest, b.primary_ns, b.observed_at, b.run_digest) l
  LEFT JOIN kbench_workloads w ON w.digest = l.workload_digest
  LEFT JOIN kbench_operations o ON o.digest = w.operation_digest
  LEFT JOIN kbench_protocols p ON p.digest = l.protocol_digest
  LEFT JOIN kbench_environments e ON e.digest = l.environment_digest
  LEFT JOIN kbench_implementations i ON i.digest = l.implementation_digest;
COMMENT ON VIEW kbench_leaders IS 'each cohort''s record: the leading run and the implementations whose spread overlaps it';

-- The history of one cohort's leader, oldest first.
CREATE FUNCTION kbench_record_history_of(cohort kbench_cohort)
	RETURNS SETOF kbench_record_history LANGUAGE sql STABLE AS $$
	SELECT * FROM kbench_record_history h
	 WHERE h.workload_digest = (cohort).workload_digest AND h.protocol_digest = (cohort).protocol_digest
	   AND h.environment_digest = (cohort).environment_digest
	 ORDER BY h.id
$$;
COMMENT ON FUNCTION kbench_record_history_of(kbench_cohort) IS 'the leaders of one cohort in the order they appeared';

--------------------------------------------------------------------------
-- Speedup against a named baseline
--------------------------------------------------------------------------

CREATE FUNCTION kbench__geomean_step(state float8[], x float8) RETURNS float8[]
	LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
	IF x IS NULL THEN
		RETURN state;
	END IF;
	IF x <= 0 OR x = 'Infinity'::float8 OR x = 'NaN'::float8 THEN
		RAISE EXCEPTION 'kbench_geomean needs positive finite values, got %', x USING ERRCODE = 'invalid_parameter_value';
	END IF;
	RETURN ARRAY[state[1] + ln(x), state[2] + 1];
END $$;

CREATE FUNCTION kbench__geomean_combine(a float8[], b float8[]) RETURNS float8[]
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN ARRAY[a[1] + b[1], a[2] + b[2]];

CREATE FUNCTION kbench__geomean_final(state float8[]) RETURNS float8
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN CASE WHEN state[2] > 0 THEN exp(state[1] / state[2]) END;

CREATE AGGREGATE kbench_geomean(float8) (
	SFUNC = kbench__geomean_step,
	STYPE = float8[],
	INITCOND = '{0,0}',
	COMBINEFUNC = kbench__geomean_combine,
	FINALFUNC = kbench__geomean_final,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE kbench_geomean(float8) IS 'geometric mean of positive values (NULLs ignored; NULL when there are none)';

-- Per workload of an operation (and per mode and environment), the baseline's
-- and the candidate's best competing runs in the same cohort, their medians and
-- speedup = baseline median / candidate median (above 1: the candidate is faster).
CREATE FUNCTION kbench_speedup(operation text, baseline text, candidate text,
                               mode text DEFAULT NULL, environment text DEFAULT NULL)
	RETURNS TABLE (workload text, axes jsonb, dtype text, protocol text, device text,
	               baseline_implementation text, baseline_run text, baseline_median_ns bigint,
	               candidate_implementation text, candidate_run text, candidate_median_ns bigint,
	               speedup float8)
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
#variable_conflict use_column
DECLARE
	ops text[] := kbench__resolve_operation(operation);
	base text[] := kbench__resolve_implementation(ops, baseline, 'baseline');
	cand text[] := kbench__resolve_implementation(ops, candidate, 'candidate');
	protos text[] := kbench__resolve_protocols(mode);
	envs text[] := kbench__resolve_environments(environment);
BEGIN
	RETURN QUERY
	WITH wl AS (
		SELECT w.digest, w.name, w.axes, w.dtypes FROM kbench_workloads w WHERE w.operation_digest = ANY (ops)
	), best AS (
		SELECT DISTINCT ON (b.workload_digest, b.protocol_digest, b.environment_digest, b.implementation_digest = ANY (base))
		       b.workload_digest, b.protocol_digest, b.environment_digest, b.implementation_digest = ANY (base) AS is_base,
		       b.implementation_digest, b.run_digest, coalesce(r.median_ns, r.primary_ns) AS median_ns
		  FROM kbench_cohort_bests b
		  JOIN wl ON wl.digest = b.workload_digest
		  JOIN kbench_runs r ON r.digest = b.run_digest
		 WHERE (b.implementation_digest = ANY (base) OR b.implementation_digest = ANY (cand))
		   AND (protos IS NULL OR b.protocol_digest = ANY (protos))
		   AND (envs IS NULL OR b.environment_digest = ANY (envs))
		 ORDER BY b.workload_digest, b.protocol_digest, b.environment_digest, b.implementation_digest = ANY (base),
		          b.primary_ns, b.observed_at, b.run_digest
	)
	SELECT wl.name, wl.axes, kbench__float_dtype(wl.dtypes), p.name,
	       concat_ws(' ', e.product, e.form_factor),
	       bi.name, bb.run_digest, bb.median_ns, ci.name, cb.run_digest, cb.median_ns,
	       bb.median_ns::float8 / cb.median_ns
	  FROM best bb
	  JOIN best cb ON cb.workload_digest = bb.workload_digest AND cb.protocol_digest = bb.protocol_digest
	              AND cb.environment_digest = bb.environment_digest AND NOT cb.is_base
	  JOIN wl ON wl.digest = bb.workload_digest
	  LEFT JOIN kbench_protocols p ON p.digest = bb.protocol_digest
	  LEFT JOIN kbench_environments e ON e.digest = bb.environment_digest
	  LEFT JOIN kbench_implementations bi ON bi.digest = bb.implementation_digest
	  LEFT JOIN kbench_implementations ci ON ci.digest = cb.implementation_digest
	 WHERE bb.is_base
	 ORDER BY 5, 4, 3, kbench__axes_key(wl.axes), 1;
END $$;
COMMENT ON FUNCTION kbench_speedup(text, text, text, text, text) IS 'per workload (and protocol, device): baseline and candidate best medians in one cohort and speedup = baseline / candidate';

-- The geometric mean of the speedups along each sweep: one row per protocol,
-- device and dtype.
CREATE FUNCTION kbench_speedup_summary(operation text, baseline text, candidate text,
                                       mode text DEFAULT NULL, environment text DEFAULT NULL)
	RETURNS TABLE (protocol text, device text, dtype text, workloads bigint,
	               geomean_speedup float8, min_speedup float8, max_speedup float8)
	LANGUAGE sql STABLE AS $$
	SELECT s.protocol, s.device, s.dtype, count(*), kbench_geomean(s.speedup), min(s.speedup), max(s.speedup)
	  FROM kbench_speedup(operation, baseline, candidate, mode, environment) s
	 GROUP BY 1, 2, 3 ORDER BY 2, 1, 3
$$;
COMMENT ON FUNCTION kbench_speedup_summary(text, text, text, text, text) IS 'geometric mean, min and max of kbench_speedup() per protocol, device and dtype';

--------------------------------------------------------------------------
-- Statistics helpers
--------------------------------------------------------------------------

-- Complementary error function (Numerical Recipes' erfcc: Chebyshev fit,
-- fractional error below 1.2e-7 everywhere).
CREATE FUNCTION kbench__erfc(x float8) RETURNS float8
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN (SELECT CASE WHEN x >= 0 THEN a ELSE 2 - a END
	          FROM (SELECT t * exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418
	                       + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587
	                       + t * (-0.82215223 + t * 0.17087277))))))))) AS a
	                  FROM (SELECT abs(x) AS z, 1 / (1 + 0.5 * abs(x)) AS t) q) r);

-- P(Z > z) for a standard normal Z.
CREATE FUNCTION kbench_normal_sf(z float8) RETURNS float8
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN 0.5 * kbench__erfc(z / sqrt(2));
COMMENT ON FUNCTION kbench_normal_sf(float8) IS 'upper tail P(Z > z) of the standard normal distribution';

-- The p-quantile of the standard normal (Acklam's rational approximation,
-- relative error below 1.2e-9).
CREATE FUNCTION kbench_normal_quantile(p float8) RETURNS float8
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	q float8;
	r float8;
BEGIN
	IF p <= 0 OR p >= 1 THEN
		RAISE EXCEPTION 'a probability must lie strictly between 0 and 1, got %', p USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF p < 0.02425 THEN
		q := sqrt(-2 * ln(p));
		RETURN (((((-7.784894002430293e-03 * q - 3.223964580411365e-01) * q - 2.400758277161838e+00) * q
		          - 2.549732539343734e+00) * q + 4.374664141464968e+00) * q + 2.938163982698783e+00)
		       / ((((7.784695709041462e-03 * q + 3.224671290700398e-01) * q + 2.445134137142996e+00) * q
		          + 3.754408661907416e+00) * q + 1);
	ELSIF p > 1 - 0.02425 THEN
		RETURN -kbench_normal_quantile(1 - p);
	END IF;
	q := p - 0.5;
	r := q * q;
	RETURN (((((-3.969683028665376e+01 * r + 2.209460984245205e+02) * r - 2.759285104469687e+02) * r
	          + 1.383577518672690e+02) * r - 3.066479806614716e+01) * r + 2.506628277459239e+00) * q
	       / (((((-5.447609879822406e+01 * r + 1.615858368580409e+02) * r - 1.556989798598866e+02) * r
	          + 6.680131188771972e+01) * r - 1.328068155288572e+01) * r + 1);
END $$;
COMMENT ON FUNCTION kbench_normal_quantile(float8) IS 'p-quantile of the standard normal distribution';

-- P(T > t) for Student's t with df degrees of freedom (exact finite series
-- for integer df, Abramowitz & Stegun 26.7.3-4; the normal tail above 1000).
CREATE FUNCTION kbench_t_sf(t float8, df int) RETURNS float8
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	th float8;
	c2 float8;
	term float8;
	s float8;
	a float8;
BEGIN
	IF df < 1 THEN
		RAISE EXCEPTION 'degrees of freedom must be at least 1, got %', df USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF t < 0 THEN
		RETURN 1 - kbench_t_sf(-t, df);
	END IF;
	IF df > 1000 THEN
		RETURN kbench_normal_sf(t * (1 - 1 / (4.0 * df)) / sqrt(1 + t * t / (2.0 * df)));
	END IF;
	th := atan(t / sqrt(df));
	c2 := cos(th) ^ 2;
	IF df % 2 = 1 THEN
		s := 0;
		IF df > 1 THEN
			term := cos(th);
			s := term;
			FOR j IN 1 .. (df - 3) / 2 LOOP
				term := term * c2 * (2 * j) / (2 * j + 1);
				s := s + term;
			END LOOP;
		END IF;
		a := 2 / pi() * (th + sin(th) * s);
	ELSE
		term := 1;
		s := 1;
		FOR j IN 1 .. (df - 2) / 2 LOOP
			term := term * c2 * (2 * j - 1) / (2 * j);
			s := s + term;
		END LOOP;
		a := sin(th) * s;
	END IF;
	RETURN greatest((1 - a) / 2, 0);
END $$;
COMMENT ON FUNCTION kbench_t_sf(float8, int) IS 'upper tail P(T > t) of Student''s t distribution with integer degrees of freedom';

-- The p-quantile of Student's t: a Cornish-Fisher start (A&S 26.7.5), then
-- Newton steps on the exact distribution function.
CREATE FUNCTION kbench_t_quantile(p float8, df int) RETURNS float8
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	z float8;
	t float8;
	n float8 := df;
	c float8;
	dens float8;
BEGIN
	IF p <= 0 OR p >= 1 THEN
		RAISE EXCEPTION 'a probability must lie strictly between 0 and 1, got %', p USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF df < 1 THEN
		RAISE EXCEPTION 'degrees of freedom must be at least 1, got %', df USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF df = 1 THEN
		RETURN tan(pi() * (p - 0.5));
	ELSIF df = 2 THEN
		RETURN (2 * p - 1) / sqrt(2 * p * (1 - p));
	END IF;
	z := kbench_normal_quantile(p);
	t := z + (z ^ 3 + z) / (4 * n) + (5 * z ^ 5 + 16 * z ^ 3 + 3 * z) / (96 * n ^ 2)
	       + (3 * z ^ 7 + 19 * z ^ 5 + 17 * z ^ 3 - 15 * z) / (384 * n ^ 3)
	       + (79 * z ^ 9 + 776 * z ^ 7 + 1482 * z ^ 5 - 1920 * z ^ 3 - 945 * z) / (92160 * n ^ 4);
	IF df > 1000 THEN
		RETURN t;
	END IF;
	-- c = Gamma((df+1)/2) / (Gamma(df/2) sqrt(df pi)), by the ratio's recurrence.
	IF df % 2 = 1 THEN
		c := 1 / sqrt(pi());
		FOR k IN 1 .. (df - 1) / 2 LOOP
			c := c * (2 * k) / (2 * k - 1.0);
		END LOOP;
	ELSE
		c := sqrt(pi()) / 2;
		FOR k IN 1 .. (df - 2) / 2 LOOP
			c := c * (2 * k + 1) / (2.0 * k);
		END LOOP;
	END IF;
	c := c / sqrt(n * pi());
	FOR i IN 1 .. 4 LOOP
		dens := c * (1 + t * t / n) ^ (-(n + 1) / 2);
		t := t - ((1 - kbench_t_sf(t, df)) - p) / dens;
	END LOOP;
	RETURN t;
END $$;
COMMENT ON FUNCTION kbench_t_quantile(float8, int) IS 'p-quantile of Student''s t distribution with integer degrees of freedom';

-- Mann-Whitney U of current against baseline samples: U of current, the
-- normal approximation's z (tie-corrected, with continuity correction) and
-- the one-sided p-value that current is stochastically larger (slower).
CREATE FUNCTION kbench_mann_whitney(current bigint[], baseline bigint[], OUT u float8, OUT z float8, OUT p_value float8)
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
	WITH v AS (
		SELECT x, true AS cur FROM unnest(current) x
		UNION ALL
		SELECT x, false FROM unnest(baseline) x
	), r AS (
		SELECT cur, rank() OVER (ORDER BY x) + (count(*) OVER (PARTITION BY x) - 1) / 2.0 AS rk,
		       count(*) OVER (PARTITION BY x) AS ties
		  FROM v
	), s AS (
		SELECT sum(rk) FILTER (WHERE cur) AS r1, count(*) FILTER (WHERE cur)::float8 AS n1,
		       count(*) FILTER (WHERE NOT cur)::float8 AS n2, count(*)::float8 AS n,
		       sum((ties ^ 3 - ties) / ties) AS tie_term
		  FROM r
	), st AS (
		SELECT r1 - n1 * (n1 + 1) / 2 AS u1, n1 * n2 / 2 AS mu,
		       sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))) AS sigma
		  FROM s WHERE n1 > 0 AND n2 > 0
	)
	SELECT u1, CASE WHEN sigma > 0 THEN (u1 - mu - 0.5) / sigma END,
	       CASE WHEN sigma > 0 THEN kbench_normal_sf((u1 - mu - 0.5) / sigma) WHEN u1 > mu THEN 0 ELSE 1 END
	  FROM st
$$;
COMMENT ON FUNCTION kbench_mann_whitney(bigint[], bigint[]) IS 'Mann-Whitney U test: U of current, normal z (tie and continuity corrected), one-sided p-value that current is larger';

CREATE FUNCTION kbench__median(v bigint[]) RETURNS float8
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(v) x);

--------------------------------------------------------------------------
-- Regressions along a series
--
-- A series is one implementation family (kbench_implementations.name: its
-- revisions, e.g. versions, share it; a run whose implementation is not in
-- the catalog stands for its digest) in one cohort (workload, protocol,
-- environment), its competing runs ordered by (observed_at, digest).  Liger
-- publishes one implementation revision per provider and puts the release in
-- each run's metadata.labels.liger_version, which is the point's version.
--------------------------------------------------------------------------

CREATE FUNCTION kbench_run_version(run_digest text) RETURNS text
	LANGUAGE sql STABLE
	RETURN (SELECT coalesce(i.version, r.manifest #>> '{metadata,labels,liger_version}', r.manifest #>> '{metadata,labels,version}')
	          FROM kbench_runs r LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
	         WHERE r.digest = run_digest);
COMMENT ON FUNCTION kbench_run_version(text) IS 'the version a run measured: its implementation''s projectRevision.version, else its metadata.labels.liger_version or .version';

CREATE VIEW kbench_series AS
SELECT r.workload_digest, r.protocol_digest, r.environment_digest,
       coalesce(i.name, r.implementation_digest) AS implementation,
       r.implementation_digest,
       coalesce(i.version, r.manifest #>> '{metadata,labels,liger_version}', r.manifest #>> '{metadata,labels,version}') AS version,
       row_number() OVER (PARTITION BY r.workload_digest, r.protocol_digest, r.environment_digest, coalesce(i.name, r.implementation_digest)
                          ORDER BY r.observed_at, r.digest) AS point,
       r.digest AS run_digest, r.observed_at, r.primary_ns, r.p20_ns, r.p80_ns, r.raw_samples_ns IS NOT NULL AS has_raw_samples
  FROM kbench_runs r LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
 WHERE r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL;
COMMENT ON VIEW kbench_series IS 'competing runs as points of series: (workload, protocol, environment, implementation name), ordered by observed_at';

-- A flagged point of a series, as the scoring functions return it.
CREATE TYPE kbench__flag AS (
	workload_digest text,
	protocol_digest text,
	environment_digest text,
	family text,
	run_digest text,
	point bigint,
	previous_run_digest text,
	value_ns float8,
	baseline_ns float8,
	statistic float8,
	critical float8,
	p_value float8,
	compared int,
	detail jsonb
);

-- The points of the series that the filters select (NULL: any).
CREATE FUNCTION kbench__points(impls text[], ops text[], protos text[], envs text[], only_raw boolean, wls text[] DEFAULT NULL)
	RETURNS TABLE (wd text, pd text, ed text, fam text, rd text, oa timestamptz, x float8, raw bigint[])
	LANGUAGE sql STABLE AS $$
	SELECT r.workload_digest, r.protocol_digest, r.environment_digest, coalesce(i.name, r.implementation_digest),
	       r.digest, r.observed_at, r.primary_ns::float8, r.raw_samples_ns
	  FROM kbench_runs r LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
	 WHERE r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL
	   AND (impls IS NULL OR r.implementation_digest = ANY (impls))
	   AND (ops IS NULL OR r.workload_digest IN (SELECT w.digest FROM kbench_workloads w WHERE w.operation_digest = ANY (ops)))
	   AND (protos IS NULL OR r.protocol_digest = ANY (protos))
	   AND (envs IS NULL OR r.environment_digest = ANY (envs))
	   AND (NOT only_raw OR r.raw_samples_ns IS NOT NULL)
	   AND (wls IS NULL OR r.workload_digest = ANY (wls))
$$;

-- percent: the point against the median of the previous w points; flagged
-- when slower by more than thr percent (and by min_change percent).
CREATE FUNCTION kbench__flags_percent(impls text[], ops text[], protos text[], envs text[], w int, thr float8, min_change float8, wls text[] DEFAULT NULL)
	RETURNS SETOF kbench__flag LANGUAGE sql STABLE AS $$
	SELECT wd, pd, ed, fam, rd, n, prev, x, base, (x - base) / base * 100, thr, NULL::float8, k::int,
	       jsonb_build_object('window', k)
	  FROM (SELECT p.*, row_number() OVER s AS n, lag(p.rd) OVER s AS prev,
	               kbench__median(array_agg(p.x::bigint) OVER (s ROWS BETWEEN w PRECEDING AND 1 PRECEDING)) AS base,
	               count(*) OVER (s ROWS BETWEEN w PRECEDING AND 1 PRECEDING) AS k
	          FROM kbench__points(impls, ops, protos, envs, false, wls) p
	        WINDOW s AS (PARTITION BY p.wd, p.pd, p.ed, p.fam ORDER BY p.oa, p.rd)) q
	 WHERE k >= 1 AND base > 0 AND (x - base) / base * 100 > thr AND (x - base) / base * 100 >= min_change
$$;

-- zscore: the point against the mean of the previous w points (at least
-- least(w, 10)), in units of the noise sigma estimated from their successive
-- differences (von Neumann: sqrt(mean((x[i] - x[i-1])^2) / 2)), which an
-- earlier step inside the window barely inflates; flagged when z > thr.
CREATE FUNCTION kbench__flags_zscore(impls text[], ops text[], protos text[], envs text[], w int, thr float8, min_change float8, wls text[] DEFAULT NULL)
	RETURNS SETOF kbench__flag LANGUAGE sql STABLE AS $$
	SELECT wd, pd, ed, fam, rd, n, prev, x, m, z, thr, NULL::float8, k::int,
	       jsonb_build_object('window', k, 'mean_ns', round(m::numeric, 1), 'sigma_ns', round(sd::numeric, 1))
	  FROM (SELECT q.*, CASE WHEN sd > 0 THEN (x - m) / sd WHEN x > m THEN 'Infinity'::float8 ELSE 0 END AS z
	          FROM (SELECT d.*, row_number() OVER s AS n, lag(d.rd) OVER s AS prev,
	                       -- numeric: its moving aggregates have an inverse transition, so a
	                       -- sliding window costs O(1) per point instead of O(w)
	                       (avg(d.x::numeric) OVER f)::float8 AS m, count(*) OVER f AS k,
	                       sqrt((avg(d.d2::numeric) OVER (s ROWS BETWEEN w - 1 PRECEDING AND 1 PRECEDING))::float8 / 2) AS sd
	                  FROM (SELECT p.*, (p.x - lag(p.x) OVER (PARTITION BY p.wd, p.pd, p.ed, p.fam ORDER BY p.oa, p.rd)) ^ 2 AS d2
	                          FROM kbench__points(impls, ops, protos, envs, false, wls) p) d
	                WINDOW s AS (PARTITION BY d.wd, d.pd, d.ed, d.fam ORDER BY d.oa, d.rd),
	                       f AS (s ROWS BETWEEN w PRECEDING AND 1 PRECEDING)) q) q2
	 WHERE k >= least(w, 10) AND z > thr AND (x - m) / m * 100 >= min_change
$$;

-- ttest: the point against the two-sided conf-level Student-t prediction
-- interval for one new observation from the previous w points (at least
-- least(w, 8)): mean +- t(df = k - 1) * sd * sqrt(1 + 1/k); flagged above it.
CREATE FUNCTION kbench__flags_ttest(impls text[], ops text[], protos text[], envs text[], w int, conf float8, min_change float8, wls text[] DEFAULT NULL)
	RETURNS SETOF kbench__flag LANGUAGE sql STABLE AS $$
	WITH tq AS MATERIALIZED (
		SELECT df, kbench_t_quantile((1 + conf) / 2, df) AS t FROM generate_series(greatest(least(w, 8) - 1, 1), w - 1) df
	)
	SELECT wd, pd, ed, fam, rd, n, prev, x, m, (x - m) / (sd * sqrt(1 + 1.0 / k)), tq.t,
	       kbench_t_sf((x - m) / (sd * sqrt(1 + 1.0 / k)), (k - 1)::int), k::int,
	       jsonb_build_object('window', k, 'mean_ns', round(m::numeric, 1), 'stddev_ns', round(sd::numeric, 1),
	                          'upper_ns', round((m + tq.t * sd * sqrt(1 + 1.0 / k))::numeric, 1), 'confidence', conf)
	  FROM (SELECT p.*, row_number() OVER s AS n, lag(p.rd) OVER s AS prev,
	               (avg(p.x::numeric) OVER f)::float8 AS m, (stddev_samp(p.x::numeric) OVER f)::float8 AS sd,
	               count(*) OVER f AS k
	          FROM kbench__points(impls, ops, protos, envs, false, wls) p
	        WINDOW s AS (PARTITION BY p.wd, p.pd, p.ed, p.fam ORDER BY p.oa, p.rd),
	               f AS (s ROWS BETWEEN w PRECEDING AND 1 PRECEDING)) q
	  JOIN tq ON tq.df = q.k - 1
	 WHERE k >= least(w, 8) AND sd > 0 AND x > m + tq.t * sd * sqrt(1 + 1.0 / k) AND (x - m) / m * 100 >= min_change
$$;

-- mwu: among the runs with raw samples, a run's samples against the pooled
-- samples of the previous w such runs; flagged when the one-sided
-- Mann-Whitney p-value is below alpha.
CREATE FUNCTION kbench__flags_mwu(impls text[], ops text[], protos text[], envs text[], w int, alpha float8, min_change float8, wls text[] DEFAULT NULL)
	RETURNS SETOF kbench__flag LANGUAGE sql STABLE AS $$
	SELECT wd, pd, ed, fam, rd, n, prev, x, bm, t.z, alpha, t.p_value, k::int,
	       jsonb_build_object('window', k, 'u', t.u, 'n_current', cardinality(raw), 'n_baseline', cardinality(base))
	  FROM (SELECT q1.*, kbench__median(base) AS bm
	          FROM (SELECT q.*, CASE WHEN w = 1 THEN q.prev_raw
	                                 ELSE ARRAY(SELECT e::bigint FROM jsonb_array_elements(q.base_j) a,
	                                                                  jsonb_array_elements_text(a) e) END AS base
	                  FROM (SELECT p.wd, p.pd, p.ed, p.fam, p.rd, p.x, p.raw, row_number() OVER s AS n, lag(p.rd) OVER s AS prev,
	                               count(*) OVER f AS k, lag(p.raw) OVER s AS prev_raw,
	                               CASE WHEN w > 1 THEN jsonb_agg(p.raw) OVER f END AS base_j
	                          FROM kbench__points(impls, ops, protos, envs, true, wls) p
	                        WINDOW s AS (PARTITION BY p.wd, p.pd, p.ed, p.fam ORDER BY p.oa, p.rd),
	                               f AS (s ROWS BETWEEN w PRECEDING AND 1 PRECEDING)) q
	                 WHERE q.k >= 1) q1) q2
	  CROSS JOIN LATERAL kbench_mann_whitney(raw, base) t
	 WHERE bm > 0 AND t.p_value < alpha AND (x - bm) / bm * 100 >= min_change
$$;

-- Regressions of an implementation family (or of every family of an
-- operation, or of the whole catalog) along each series.  Flagged points at
-- most least(window, 20) points apart are one regression (a window that
-- straddles a step keeps flagging for a while): its first point is reported,
-- with how many points were flagged.  Only runs of at least persistence
-- consecutive flagged points count (default 2 for ttest, whose 99% interval
-- leaves 0.5% of flat points out; 1 otherwise).
CREATE FUNCTION kbench_regressions(implementation text, operation text DEFAULT NULL, mode text DEFAULT NULL,
                                   environment text DEFAULT NULL, method text DEFAULT 'zscore',
                                   window_size int DEFAULT NULL, threshold float8 DEFAULT NULL,
                                   min_change_pct float8 DEFAULT 1, persistence int DEFAULT NULL,
                                   in_workload text DEFAULT NULL)
	RETURNS TABLE (family text, workload text, protocol text, device text,
	               run_digest text, observed_at timestamptz, version text,
	               previous_run_digest text, previous_version text,
	               flagged_by text, value_ns float8, baseline_ns float8, change_pct float8,
	               statistic float8, critical float8, p_value float8, compared int, points bigint, detail jsonb,
	               workload_digest text, protocol_digest text, environment_digest text)
	-- jit off: the four methods' plans are costed as if all ran, which crosses
	-- jit_above_cost and spent ~100 ms compiling a 10,000-point query that runs in ~100 ms
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp SET jit = off STABLE AS $$
#variable_conflict use_column
DECLARE
	m text := lower(method);
	w int;
	lo int;
	persist int;
	wls text[];
	thr float8;
	ops text[];
	impls text[];
	protos text[];
	envs text[];
BEGIN
	IF m IS NULL OR m NOT IN ('percent', 'zscore', 'ttest', 'mwu') THEN
		RAISE EXCEPTION 'unknown regression method "%"', method USING ERRCODE = 'invalid_parameter_value',
			HINT = 'Use percent, zscore, ttest or mwu.';
	END IF;
	persist := coalesce(persistence, CASE m WHEN 'ttest' THEN 2 ELSE 1 END);
	IF persist < 1 THEN
		RAISE EXCEPTION 'persistence must be 1 or more, got %', persist USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'It is how many flagged points a regression needs (default 2 for ttest, 1 otherwise).';
	END IF;
	w := coalesce(window_size, CASE m WHEN 'percent' THEN 10 WHEN 'zscore' THEN 100 WHEN 'ttest' THEN 64 ELSE 1 END);
	thr := coalesce(threshold, CASE m WHEN 'percent' THEN 5 WHEN 'zscore' THEN 5 WHEN 'ttest' THEN 0.99 ELSE 0.001 END);
	lo := CASE m WHEN 'zscore' THEN 2 WHEN 'ttest' THEN 3 ELSE 1 END;
	IF w < lo OR w > 10000 THEN
		RAISE EXCEPTION 'window must be between % and 10000 for method %, got %', lo, m, w
			USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'The window is how many earlier points of the series the point is compared with.';
	END IF;
	IF m IN ('percent', 'zscore') AND NOT (thr > 0 AND thr < 'Infinity'::float8) THEN
		RAISE EXCEPTION 'threshold must be a positive number for method %, got %', m, thr USING ERRCODE = 'invalid_parameter_value',
			DETAIL = CASE m WHEN 'percent' THEN 'It is the slowdown in percent that is flagged (default 5).'
			                ELSE 'It is the z-score above which a point is flagged (default 5).' END;
	END IF;
	IF m IN ('ttest', 'mwu') AND NOT (thr > 0 AND thr < 1) THEN
		RAISE EXCEPTION 'threshold must lie strictly between 0 and 1 for method %, got %', m, thr USING ERRCODE = 'invalid_parameter_value',
			DETAIL = CASE m WHEN 'ttest' THEN 'It is the prediction interval''s confidence level (default 0.99).'
			                ELSE 'It is the significance level of the one-sided test (default 0.001).' END;
	END IF;
	IF min_change_pct IS NULL OR NOT (min_change_pct >= 0 AND min_change_pct < 'Infinity'::float8) THEN
		RAISE EXCEPTION 'min_change_pct must be a number of percent, 0 or more, got %', coalesce(min_change_pct::text, 'NULL')
			USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'A flagged point must also be slower than its baseline by this much (default 1).';
	END IF;
	IF operation IS NOT NULL THEN
		ops := kbench__resolve_operation(operation);
	END IF;
	IF implementation IS NOT NULL THEN
		impls := kbench__resolve_implementation(ops, implementation);
		impls := ARRAY(SELECT DISTINCT i.digest FROM kbench_implementations i
		                WHERE i.digest = ANY (impls)
		                   OR i.name IN (SELECT j.name FROM kbench_implementations j WHERE j.digest = ANY (impls)));
	END IF;
	protos := kbench__resolve_protocols(mode);
	envs := kbench__resolve_environments(environment);
	IF in_workload IS NOT NULL THEN
		-- one cohort family: only that workload's series
		SELECT array_agg(w.digest) INTO wls FROM kbench_workloads w WHERE w.name = in_workload OR w.digest = in_workload;
		IF wls IS NULL THEN
			RAISE EXCEPTION 'unknown workload "%"', in_workload USING ERRCODE = 'undefined_object',
				DETAIL = 'No workload in the catalog has that name or digest.';
		END IF;
	END IF;

	RETURN QUERY
	WITH f AS (
		SELECT * FROM kbench__flags_percent(impls, ops, protos, envs, w, thr, min_change_pct, wls) WHERE m = 'percent'
		UNION ALL
		SELECT * FROM kbench__flags_zscore(impls, ops, protos, envs, w, thr, min_change_pct, wls) WHERE m = 'zscore'
		UNION ALL
		SELECT * FROM kbench__flags_ttest(impls, ops, protos, envs, w, thr, min_change_pct, wls) WHERE m = 'ttest'
		UNION ALL
		SELECT * FROM kbench__flags_mwu(impls, ops, protos, envs, w, thr, min_change_pct, wls) WHERE m = 'mwu'
	), g0 AS (
		SELECT f.*, f.point - row_number() OVER (PARTITION BY f.workload_digest, f.protocol_digest, f.environment_digest, f.family
		                                         ORDER BY f.point) AS stretch
		  FROM f
	), g1 AS (          -- points in runs of at least persist consecutive flagged points
		SELECT g0.* FROM (SELECT g0.*, count(*) OVER (PARTITION BY g0.workload_digest, g0.protocol_digest, g0.environment_digest,
		                                                          g0.family, g0.stretch) AS stretch_len FROM g0) g0
		 WHERE g0.stretch_len >= persist
	), g2 AS (
		SELECT g1.*, CASE WHEN g1.point - lag(g1.point) OVER (PARTITION BY g1.workload_digest, g1.protocol_digest,
		                                                      g1.environment_digest, g1.family ORDER BY g1.point) <= least(w, 20)
		                  THEN 0 ELSE 1 END AS starts
		  FROM g1
	), g AS (
		SELECT g2.*, sum(g2.starts) OVER (PARTITION BY g2.workload_digest, g2.protocol_digest, g2.environment_digest, g2.family
		                                  ORDER BY g2.point) AS episode
		  FROM g2
	), s AS (
		SELECT DISTINCT ON (g.workload_digest, g.protocol_digest, g.environment_digest, g.family, g.episode)
		       g.*, count(*) OVER (PARTITION BY g.workload_digest, g.protocol_digest, g.environment_digest, g.family, g.episode) AS n
		  FROM g
		 ORDER BY g.workload_digest, g.protocol_digest, g.environment_digest, g.family, g.episode, g.point
	)
	SELECT s.family, wl.name, p.name, concat_ws(' ', e.product, e.form_factor),
	       s.run_digest, r.observed_at, kbench_run_version(s.run_digest),
	       s.previous_run_digest, kbench_run_version(s.previous_run_digest),
	       m, s.value_ns, s.baseline_ns, round(((s.value_ns - s.baseline_ns) / s.baseline_ns * 100)::numeric, 2)::float8,
	       s.statistic, s.critical, s.p_value, s.compared, s.n, s.detail,
	       s.workload_digest, s.protocol_digest, s.environment_digest
	  FROM s
	  JOIN kbench_runs r ON r.digest = s.run_digest
	  LEFT JOIN kbench_workloads wl ON wl.digest = s.workload_digest
	  LEFT JOIN kbench_protocols p ON p.digest = s.protocol_digest
	  LEFT JOIN kbench_environments e ON e.digest = s.environment_digest
	 ORDER BY s.family, 2, 3, 4, r.observed_at, s.run_digest;
END $$;
COMMENT ON FUNCTION kbench_regressions(text, text, text, text, text, int, float8, float8, int, text) IS 'flagged slowdowns along each series (implementation family in one cohort): percent (window 10, 5%), zscore (window 100, z > 5), ttest (last 64, 0.99 prediction interval), mwu (raw samples, alpha 0.001)';

--------------------------------------------------------------------------
-- Roofline: bytes and FLOPs per operation and pass, device peaks
--------------------------------------------------------------------------

-- Known devices and their datasheet peaks (dense, no sparsity; boost clocks).
-- An environment matches the row with its product and form factor, else the
-- product's row without a form factor.  Add rows for other devices; rows
-- you add (seeded = false) are kept by pg_dump.
CREATE TABLE kbench_devices (
	name text PRIMARY KEY,
	vendor text NOT NULL,
	product text NOT NULL,                -- as kbench_environments.product
	form_factor text,                     -- as kbench_environments.form_factor; NULL: any
	architecture text,
	memory_bytes bigint,
	peak_bandwidth_bytes_per_s float8 NOT NULL CHECK (peak_bandwidth_bytes_per_s > 0),
	peak_flops_fp32 float8 CHECK (peak_flops_fp32 > 0),    -- vector (CUDA core / SIMD) fp32
	peak_flops_tf32 float8 CHECK (peak_flops_tf32 > 0),    -- matrix (tensor core)
	peak_flops_bf16 float8 CHECK (peak_flops_bf16 > 0),    -- matrix, fp32 accumulate
	peak_flops_fp16 float8 CHECK (peak_flops_fp16 > 0),    -- matrix, fp32 accumulate
	peak_flops_fp8 float8 CHECK (peak_flops_fp8 > 0),      -- matrix
	source text,
	seeded boolean NOT NULL DEFAULT false,
	UNIQUE NULLS NOT DISTINCT (product, form_factor)
);
COMMENT ON TABLE kbench_devices IS 'device peaks for the roofline: memory bandwidth and FLOP rates by precision (datasheet, dense)';

INSERT INTO kbench_devices (name, vendor, product, form_factor, architecture, memory_bytes, peak_bandwidth_bytes_per_s,
                            peak_flops_fp32, peak_flops_tf32, peak_flops_bf16, peak_flops_fp16, peak_flops_fp8, source, seeded) VALUES
	('A100 SXM4 40GB', 'nvidia', 'NVIDIA A100', 'SXM4-40GB', 'sm_80', 40 * 2^30, 1555e9, 19.5e12, 156e12, 312e12, 312e12, NULL, 'NVIDIA A100 datasheet', true),
	('A100 SXM4 80GB', 'nvidia', 'NVIDIA A100', 'SXM4-80GB', 'sm_80', 80 * 2^30, 2039e9, 19.5e12, 156e12, 312e12, 312e12, NULL, 'NVIDIA A100 datasheet', true),
	('A100 PCIe 40GB', 'nvidia', 'NVIDIA A100', 'PCIE-40GB', 'sm_80', 40 * 2^30, 1555e9, 19.5e12, 156e12, 312e12, 312e12, NULL, 'NVIDIA A100 datasheet', true),
	('A100 PCIe 80GB', 'nvidia', 'NVIDIA A100', '80GB PCIe', 'sm_80', 80 * 2^30, 1935e9, 19.5e12, 156e12, 312e12, 312e12, NULL, 'NVIDIA A100 datasheet', true),
	('H100 SXM5 80GB', 'nvidia', 'NVIDIA H100', '80GB HBM3', 'sm_90', 80 * 2^30, 3350e9, 67e12, 494.7e12, 989.4e12, 989.4e12, 1978.9e12, 'NVIDIA H100 datasheet (SXM5)', true),
	('H100 PCIe 80GB', 'nvidia', 'NVIDIA H100', 'PCIe', 'sm_90', 80 * 2^30, 2000e9, 51.2e12, 378e12, 756e12, 756e12, 1513e12, 'NVIDIA H100 datasheet (PCIe)', true),
	('H100 NVL 94GB', 'nvidia', 'NVIDIA H100', 'NVL', 'sm_90', 94 * 2^30, 3900e9, 60e12, 417.5e12, 835e12, 835e12, 1670e12, 'NVIDIA H100 datasheet (NVL)', true),
	('H200 SXM 141GB', 'nvidia', 'NVIDIA H200', NULL, 'sm_90', 141 * 2^30, 4800e9, 67e12, 494.7e12, 989.4e12, 989.4e12, 1978.9e12, 'NVIDIA H200 datasheet (SXM)', true),
	('H200 NVL 141GB', 'nvidia', 'NVIDIA H200', 'NVL', 'sm_90', 141 * 2^30, 4800e9, 60e12, 417.5e12, 835e12, 835e12, 1670e12, 'NVIDIA H200 datasheet (NVL)', true),
	('B200 180GB', 'nvidia', 'NVIDIA B200', NULL, 'sm_100', 180 * 2^30, 8000e9, 75e12, 1125e12, 2250e12, 2250e12, 4500e12, 'NVIDIA HGX B200 datasheet, per GPU', true),
	('L4 24GB', 'nvidia', 'NVIDIA L4', NULL, 'sm_89', 24 * 2^30, 300e9, 30.3e12, 60e12, 121e12, 121e12, 242e12, 'NVIDIA L4 datasheet', true),
	('L40S 48GB', 'nvidia', 'NVIDIA L40S', NULL, 'sm_89', 48 * 2^30, 864e9, 91.6e12, 183e12, 362e12, 362e12, 733e12, 'NVIDIA L40S datasheet', true),
	('MI300X 192GB', 'amd', 'AMD Instinct MI300X', NULL, 'gfx942', 192 * 2^30, 5300e9, 163.4e12, 653.7e12, 1307.4e12, 1307.4e12, 2614.9e12, 'AMD Instinct MI300X datasheet', true),
	('GeForce RTX 3090', 'nvidia', 'NVIDIA GeForce RTX 3090', NULL, 'sm_86', 24 * 2^30, 936e9, 35.6e12, 35.6e12, 71e12, 71e12, NULL, 'NVIDIA Ampere GA102 whitepaper', true),
	('GeForce RTX 4090', 'nvidia', 'NVIDIA GeForce RTX 4090', NULL, 'sm_89', 24 * 2^30, 1008e9, 82.6e12, 82.6e12, 165.2e12, 165.2e12, 330.3e12, 'NVIDIA Ada Lovelace whitepaper', true);

-- The device row of an environment.
CREATE FUNCTION kbench_device_of(environment_digest text) RETURNS kbench_devices
	LANGUAGE sql STABLE
	RETURN (SELECT d FROM kbench_environments e JOIN kbench_devices d ON d.product = e.product
	                  AND (d.form_factor = e.form_factor OR d.form_factor IS NULL)
	         WHERE e.digest = environment_digest
	         ORDER BY d.form_factor IS NULL LIMIT 1);
COMMENT ON FUNCTION kbench_device_of(text) IS 'the kbench_devices row of an environment: same product and form factor, else the product''s row without one';

-- Whether a cost expression uses only axis names, numbers, + - * /,
-- parentheses and least(a, b) / greatest(a, b) ('dtype_bytes' is the bytes
-- of the workload's float dtype).
CREATE FUNCTION kbench__cost_expression_ok(expr text) RETURNS boolean
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN expr ~ '^[-+*/(),. a-z_0-9]+$' AND expr !~ '--|/\*' AND expr ~ '[a-z0-9]';

-- Bytes moved and FLOPs done per call, by operation (its short name:
-- layer_norm for liger-layer-norm) and pass, as expressions over the
-- workload's axes.  compute says which peak bounds the FLOPs: vector (fp32
-- CUDA-core rate) or tensor (the matrix rate of the workload's dtype).
CREATE TABLE kbench_operation_costs (
	operation text NOT NULL,
	mode text NOT NULL CHECK (mode IN ('forward', 'backward', 'full')),
	bytes text NOT NULL CHECK (kbench__cost_expression_ok(bytes)),
	flops text NOT NULL CHECK (kbench__cost_expression_ok(flops)),
	compute text NOT NULL DEFAULT 'vector' CHECK (compute IN ('vector', 'tensor')),
	note text,
	seeded boolean NOT NULL DEFAULT false,
	PRIMARY KEY (operation, mode)
);
COMMENT ON TABLE kbench_operation_costs IS 'compulsory bytes and FLOPs per call of an operation''s pass, as expressions over the workload''s axes and dtype_bytes';

-- R rows, H hidden; s = dtype_bytes.  The layer_norm, megatron_cross_entropy,
-- jsd and distill_jsd_loss formulas are kernels/ops/*.c's (ln_cost, ce_cost,
-- jsd_cost, dj_cost); the registry has no mode for jsd and distill_jsd_loss,
-- which Liger times with the gradient computed in the forward pass.
INSERT INTO kbench_operation_costs (operation, mode, bytes, flops, compute, note, seeded) VALUES
	('layer_norm', 'forward', 'dtype_bytes * (2 * rows * hidden + 2 * hidden) + 8 * rows', '8 * rows * hidden', 'vector',
	 'read x, weight, bias; write y and fp32 mean, rstd per row (kernels/ops/layer_norm.c)', true),
	('layer_norm', 'backward', 'dtype_bytes * (3 * rows * hidden + 3 * hidden) + 8 * rows', '14 * rows * hidden', 'vector',
	 'read x, dy, weight, mean, rstd; write dx, dweight, dbias (kernels/ops/layer_norm.c)', true),
	('layer_norm', 'full', 'dtype_bytes * (5 * rows * hidden + 5 * hidden) + 16 * rows', '22 * rows * hidden', 'vector',
	 'forward + backward (kernels/ops/layer_norm.c)', true),
	('rms_norm', 'forward', 'dtype_bytes * (2 * rows * hidden + hidden) + 4 * rows', '4 * rows * hidden', 'vector',
	 'read x, weight; write y and fp32 rstd per row', true),
	('rms_norm', 'backward', 'dtype_bytes * (3 * rows * hidden + 2 * hidden) + 4 * rows', '9 * rows * hidden', 'vector',
	 'read x, dy, weight, rstd; write dx, dweight', true),
	('rms_norm', 'full', 'dtype_bytes * (5 * rows * hidden + 3 * hidden) + 8 * rows', '13 * rows * hidden', 'vector',
	 'forward + backward', true),
	('softmax', 'forward', 'dtype_bytes * 2 * rows * hidden', '5 * rows * hidden', 'vector',
	 'read x, write y (max, subtract, exp, sum, divide)', true),
	('softmax', 'backward', 'dtype_bytes * 3 * rows * hidden', '4 * rows * hidden', 'vector',
	 'read y, dy; write dx', true),
	('softmax', 'full', 'dtype_bytes * 5 * rows * hidden', '9 * rows * hidden', 'vector', 'forward + backward', true),
	('cross_entropy', 'forward', 'dtype_bytes * tokens * vocab + 12 * tokens', '4 * tokens * vocab', 'vector',
	 'read logits, int64 targets; write fp32 losses (as megatron_cross_entropy)', true),
	('cross_entropy', 'backward', '2 * dtype_bytes * tokens * vocab + 16 * tokens', '9 * tokens * vocab', 'vector',
	 'read logits once, write the gradient (as megatron_cross_entropy)', true),
	('cross_entropy', 'full', '2 * dtype_bytes * tokens * vocab + 16 * tokens', '9 * tokens * vocab', 'vector',
	 'one fused pass: read logits once, write the gradient (as megatron_cross_entropy)', true),
	('megatron_cross_entropy', 'forward', 'dtype_bytes * batch * seq * vocab + 12 * batch * seq', '4 * batch * seq * vocab', 'vector',
	 'read logits, int64 targets; write fp32 losses (kernels/ops/megatron_cross_entropy.c)', true),
	('megatron_cross_entropy', 'backward', '2 * dtype_bytes * batch * seq * vocab + 16 * batch * seq', '9 * batch * seq * vocab', 'vector',
	 'Liger times forward + backward here; read logits once, write the gradient (kernels/ops/megatron_cross_entropy.c)', true),
	('megatron_cross_entropy', 'full', '2 * dtype_bytes * batch * seq * vocab + 16 * batch * seq', '9 * batch * seq * vocab', 'vector',
	 'read logits once, write the gradient (kernels/ops/megatron_cross_entropy.c)', true),
	('jsd', 'forward', '3 * dtype_bytes * tokens * vocab + 4 * tokens + 4', '12 * tokens * vocab', 'vector',
	 'read X and Y, write dX (Liger computes the gradient in the forward pass; kernels/ops/jsd.c)', true),
	('jsd', 'backward', '3 * dtype_bytes * tokens * vocab + 4 * tokens + 4', '12 * tokens * vocab', 'vector',
	 'as forward (kernels/ops/jsd.c has one cost for every pass)', true),
	('jsd', 'full', '3 * dtype_bytes * tokens * vocab + 4 * tokens + 4', '12 * tokens * vocab', 'vector',
	 'as forward (kernels/ops/jsd.c has one cost for every pass)', true),
	('kl_div', 'forward', '2 * dtype_bytes * tokens * vocab + 4 * tokens', '4 * tokens * vocab', 'vector',
	 'read input (log-probabilities) and target; write the loss', true),
	('kl_div', 'backward', '2 * dtype_bytes * tokens * vocab', 'tokens * vocab', 'vector',
	 'read target, write the gradient', true),
	('kl_div', 'full', '4 * dtype_bytes * tokens * vocab + 4 * tokens', '5 * tokens * vocab', 'vector', 'forward + backward', true),
	('distill_jsd_loss', 'forward',
	 'dtype_bytes * (tokens * (hidden / 2 + hidden) + vocab * (hidden / 2 + hidden)) + 8 * tokens + dtype_bytes * (tokens * hidden / 2 + vocab * hidden / 2) + 4 * tokens',
	 '2 * tokens * vocab * (3 * hidden / 2 + hidden)', 'tensor',
	 'four GEMMs (student and teacher logits, student input and weight gradients); inputs, weights, targets read once, gradients written once (kernels/ops/distill_jsd_loss.c, with 2 bytes generalised to dtype_bytes)', true),
	('distill_jsd_loss', 'backward',
	 'dtype_bytes * (tokens * (hidden / 2 + hidden) + vocab * (hidden / 2 + hidden)) + 8 * tokens + dtype_bytes * (tokens * hidden / 2 + vocab * hidden / 2) + 4 * tokens',
	 '2 * tokens * vocab * (3 * hidden / 2 + hidden)', 'tensor', 'as forward (kernels/ops/distill_jsd_loss.c has one cost)', true),
	('distill_jsd_loss', 'full',
	 'dtype_bytes * (tokens * (hidden / 2 + hidden) + vocab * (hidden / 2 + hidden)) + 8 * tokens + dtype_bytes * (tokens * hidden / 2 + vocab * hidden / 2) + 4 * tokens',
	 '2 * tokens * vocab * (3 * hidden / 2 + hidden)', 'tensor', 'as forward (kernels/ops/distill_jsd_loss.c has one cost)', true),
	('swiglu', 'forward', 'dtype_bytes * (2 * batch * seq * hidden + 3 * hidden * intermediate)',
	 '6 * batch * seq * hidden * intermediate + 5 * batch * seq * intermediate', 'tensor',
	 'the LLaMA MLP: gate, up and down projections and silu(gate) * up; read x and the three weights, write y', true),
	('swiglu', 'backward', 'dtype_bytes * (3 * batch * seq * hidden + 6 * hidden * intermediate + 2 * batch * seq * intermediate)',
	 '12 * batch * seq * hidden * intermediate + 10 * batch * seq * intermediate', 'tensor',
	 'read dy, x, the saved gate and up projections and the weights; write dx and the three weight gradients', true),
	('swiglu', 'full', 'dtype_bytes * (5 * batch * seq * hidden + 9 * hidden * intermediate + 2 * batch * seq * intermediate)',
	 '18 * batch * seq * hidden * intermediate + 15 * batch * seq * intermediate', 'tensor', 'forward + backward', true),
	('geglu', 'forward', 'dtype_bytes * (2 * batch * seq * hidden + 3 * hidden * intermediate)',
	 '6 * batch * seq * hidden * intermediate + 10 * batch * seq * intermediate', 'tensor',
	 'the gated MLP with tanh-approximated gelu; read x and the three weights, write y', true),
	('geglu', 'backward', 'dtype_bytes * (3 * batch * seq * hidden + 6 * hidden * intermediate + 2 * batch * seq * intermediate)',
	 '12 * batch * seq * hidden * intermediate + 16 * batch * seq * intermediate', 'tensor',
	 'read dy, x, the saved gate and up projections and the weights; write dx and the three weight gradients', true),
	('geglu', 'full', 'dtype_bytes * (5 * batch * seq * hidden + 9 * hidden * intermediate + 2 * batch * seq * intermediate)',
	 '18 * batch * seq * hidden * intermediate + 26 * batch * seq * intermediate', 'tensor', 'forward + backward', true),
	('embedding', 'forward', 'dtype_bytes * (batch * seq * hidden + least(batch * seq, vocab) * hidden) + 8 * batch * seq', '0', 'vector',
	 'read int64 ids, read each distinct row at most once (at most vocab of them), write y', true),
	('embedding', 'backward', 'dtype_bytes * (2 * batch * seq * hidden + vocab * hidden) + 8 * batch * seq', 'batch * seq * hidden', 'vector',
	 'read dy and ids, write the (zeroed) weight gradient and accumulate the gathered rows', true),
	('embedding', 'full', 'dtype_bytes * (3 * batch * seq * hidden + least(batch * seq, vocab) * hidden + vocab * hidden) + 16 * batch * seq', 'batch * seq * hidden', 'vector',
	 'forward + backward', true);

SELECT pg_catalog.pg_extension_config_dump('kbench_devices', 'WHERE NOT seeded');
SELECT pg_catalog.pg_extension_config_dump('kbench_operation_costs', 'WHERE NOT seeded');

-- Evaluate a cost expression for a workload's axes (and dtype_bytes).
CREATE FUNCTION kbench_cost_eval(expr text, axes jsonb, dtype_bytes int) RETURNS float8
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE PARALLEL SAFE AS $$
DECLARE
	sql text := ' ' || expr || ' ';
	id text;
	v jsonb;
	result float8;
BEGIN
	IF NOT kbench__cost_expression_ok(expr) THEN
		RAISE EXCEPTION 'invalid cost expression "%"', expr USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'A cost expression is made of axis names, dtype_bytes, numbers, + - * /, parentheses, least() and greatest().';
	END IF;
	FOR id IN SELECT DISTINCT m[1] FROM regexp_matches(expr, '([a-z_][a-z_0-9]*)', 'g') m LOOP
		CONTINUE WHEN id IN ('least', 'greatest') AND expr ~ ('(^|[^a-z_0-9])' || id || ' *\(');
		IF id = 'dtype_bytes' THEN
			IF dtype_bytes IS NULL THEN
				RETURN NULL;
			END IF;
			v := to_jsonb(dtype_bytes);
		ELSE
			v := axes -> id;
		END IF;
		IF v IS NULL OR jsonb_typeof(v) <> 'number' THEN
			RAISE EXCEPTION 'unknown axis "%" in cost expression "%"', id, expr USING ERRCODE = 'undefined_object',
				DETAIL = format('The workload''s axes are %s.', coalesce((SELECT string_agg(k, ', ' ORDER BY k) FROM jsonb_object_keys(axes) k), 'none'));
		END IF;
		sql := regexp_replace(sql, '([^a-z_0-9])' || id || '(?![a-z_0-9])', '\1' || (v::text)::float8::text || '::float8', 'g');
	END LOOP;
	EXECUTE 'SELECT (' || sql || ')::float8' INTO result;
	RETURN result;
END $$;
COMMENT ON FUNCTION kbench_cost_eval(text, jsonb, int) IS 'value of a kbench_operation_costs expression for a workload''s axes';

-- The bytes and FLOPs of one call of a workload's pass, when its operation
-- has costs.
CREATE FUNCTION kbench_workload_cost(workload_digest text, mode text, OUT bytes float8, OUT flops float8, OUT compute text)
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
DECLARE
	c record;
	w record;
BEGIN
	SELECT wl.axes, wl.dtypes, o.name INTO w FROM kbench_workloads wl JOIN kbench_operations o ON o.digest = wl.operation_digest
	 WHERE wl.digest = workload_digest;
	IF NOT FOUND THEN
		RETURN;
	END IF;
	SELECT * INTO c FROM kbench_operation_costs k WHERE k.operation = kbench__op_key(w.name) AND k.mode = kbench_workload_cost.mode;
	IF NOT FOUND THEN
		RETURN;
	END IF;
	bytes := kbench_cost_eval(c.bytes, w.axes, kbench__dtype_bytes(kbench__float_dtype(w.dtypes)));
	flops := kbench_cost_eval(c.flops, w.axes, kbench__dtype_bytes(kbench__float_dtype(w.dtypes)));
	compute := c.compute;
END $$;
COMMENT ON FUNCTION kbench_workload_cost(text, text) IS 'bytes moved and FLOPs done by one call of a workload''s pass (kbench_operation_costs), and which peak bounds the FLOPs';

-- Every competing run whose operation has costs: achieved bandwidth and FLOP
-- rate, and how close it is to its device's peaks and roofline.
CREATE VIEW kbench_roofline AS
SELECT r.digest AS run_digest, o.name AS operation, kbench_protocol_mode(p.name) AS mode, w.name AS workload, w.axes,
       kbench__float_dtype(w.dtypes) AS dtype, i.name AS implementation,
       concat_ws(' ', e.product, e.form_factor) AS environment, (d).name AS device,
       r.primary_ns, c.bytes, c.flops, c.flops / nullif(c.bytes, 0) AS arithmetic_intensity,
       c.bytes / (r.primary_ns * 1e-9) AS achieved_bytes_per_s,
       c.flops / (r.primary_ns * 1e-9) AS achieved_flops_per_s,
       (d).peak_bandwidth_bytes_per_s,
       pk.peak_flops,
       100 * c.bytes / (r.primary_ns * 1e-9) / (d).peak_bandwidth_bytes_per_s AS pct_peak_bandwidth,
       100 * c.flops / (r.primary_ns * 1e-9) / pk.peak_flops AS pct_peak_flops,
       CASE WHEN (d).name IS NULL OR pk.peak_flops IS NULL THEN NULL
            WHEN c.flops / nullif(c.bytes, 0) < pk.peak_flops / (d).peak_bandwidth_bytes_per_s THEN 'memory'
            ELSE 'compute' END AS bound,
       1e9 * greatest(c.bytes / (d).peak_bandwidth_bytes_per_s, coalesce(c.flops / pk.peak_flops, 0)) AS floor_ns,
       100 * 1e9 * greatest(c.bytes / (d).peak_bandwidth_bytes_per_s, coalesce(c.flops / pk.peak_flops, 0)) / r.primary_ns AS pct_of_roofline,
       r.workload_digest, r.protocol_digest, r.environment_digest, r.implementation_digest
  FROM kbench_runs r
  JOIN kbench_workloads w ON w.digest = r.workload_digest
  JOIN kbench_operations o ON o.digest = w.operation_digest
  JOIN kbench_protocols p ON p.digest = r.protocol_digest
  JOIN kbench_operation_costs k ON k.operation = kbench__op_key(o.name) AND k.mode = kbench_protocol_mode(p.name)
  CROSS JOIN LATERAL kbench_workload_cost(r.workload_digest, k.mode) c
  LEFT JOIN kbench_environments e ON e.digest = r.environment_digest
  LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
  CROSS JOIN LATERAL (SELECT kbench_device_of(r.environment_digest) AS d) dv
  CROSS JOIN LATERAL (SELECT CASE WHEN c.compute = 'vector' THEN (d).peak_flops_fp32
                                  WHEN kbench__float_dtype(w.dtypes) = 'bf16' THEN (d).peak_flops_bf16
                                  WHEN kbench__float_dtype(w.dtypes) = 'fp16' THEN (d).peak_flops_fp16
                                  WHEN kbench__float_dtype(w.dtypes) LIKE 'fp8%' THEN (d).peak_flops_fp8
                                  WHEN kbench__float_dtype(w.dtypes) = 'tf32' THEN (d).peak_flops_tf32
                                  ELSE (d).peak_flops_fp32 END AS peak_flops) pk
 WHERE r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL;
COMMENT ON VIEW kbench_roofline IS 'competing runs with achieved bytes/s and FLOP/s from kbench_operation_costs, against their device''s peaks (kbench_devices)';

-- What the runs themselves show a device can do: the best bandwidth and FLOP
-- rate any competing run achieved on it, beside the datasheet peak.
CREATE VIEW kbench_device_observed AS
SELECT environment, device, count(*) AS runs,
       max(achieved_bytes_per_s) AS best_bytes_per_s, max(pct_peak_bandwidth) AS best_pct_peak_bandwidth,
       max(achieved_flops_per_s) AS best_flops_per_s,
       (array_agg(run_digest ORDER BY achieved_bytes_per_s DESC))[1] AS best_bandwidth_run,
       max(peak_bandwidth_bytes_per_s) AS peak_bandwidth_bytes_per_s
  FROM kbench_roofline
 GROUP BY environment, device;
COMMENT ON VIEW kbench_device_observed IS 'per environment, the best achieved bandwidth and FLOP rate over all runs with costs, beside the datasheet peak';

--------------------------------------------------------------------------
-- Sweeps
--------------------------------------------------------------------------

-- Latency along one axis: for each implementation (and environment, dtype
-- and the other axes' values), its best competing run at each value of the
-- axis.
CREATE FUNCTION kbench_sweep(operation text, mode text, axis text, environment text DEFAULT NULL,
                             implementation text DEFAULT NULL)
	RETURNS TABLE (axis_value numeric, implementation_name text, device text, dtype text, fixed_axes jsonb,
	               median_ns bigint, p20_ns bigint, p80_ns bigint, run_digest text, observed_at timestamptz)
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
#variable_conflict use_column
DECLARE
	ops text[] := kbench__resolve_operation(operation);
	protos text[];
	envs text[];
	impls text[];
	known text;
BEGIN
	IF mode IS NULL THEN
		RAISE EXCEPTION 'a mode is required' USING ERRCODE = 'null_value_not_allowed',
			HINT = 'Use forward, backward or full.';
	END IF;
	protos := kbench__resolve_protocols(mode);
	envs := kbench__resolve_environments(environment);
	IF implementation IS NOT NULL THEN
		impls := kbench__resolve_implementation(ops, implementation);
	END IF;
	SELECT string_agg(DISTINCT k, ', ' ORDER BY k) INTO known
	  FROM kbench_workloads w, jsonb_object_keys(coalesce(w.axes, '{}')) k WHERE w.operation_digest = ANY (ops);
	IF axis IS NULL OR NOT EXISTS (SELECT 1 FROM kbench_workloads w WHERE w.operation_digest = ANY (ops) AND w.axes ? axis) THEN
		RAISE EXCEPTION 'unknown axis "%" for operation "%"', axis, operation USING ERRCODE = 'undefined_object',
			DETAIL = format('The operation''s workloads have the axes %s.', coalesce(known, '(none)'));
	END IF;
	RETURN QUERY
	SELECT (w.axes ->> axis)::numeric, coalesce(i.name, b.implementation_digest), concat_ws(' ', e.product, e.form_factor),
	       kbench__float_dtype(w.dtypes), w.axes - axis,
	       coalesce(r.median_ns, r.primary_ns), r.p20_ns, r.p80_ns, b.run_digest, b.observed_at
	  FROM kbench_cohort_bests b
	  JOIN kbench_workloads w ON w.digest = b.workload_digest
	  JOIN kbench_runs r ON r.digest = b.run_digest
	  LEFT JOIN kbench_implementations i ON i.digest = b.implementation_digest
	  LEFT JOIN kbench_environments e ON e.digest = b.environment_digest
	 WHERE w.operation_digest = ANY (ops) AND w.axes ? axis
	   AND b.protocol_digest = ANY (protos)
	   AND (envs IS NULL OR b.environment_digest = ANY (envs))
	   AND (impls IS NULL OR b.implementation_digest = ANY (impls))
	 ORDER BY 3, 2, 4, kbench__axes_key(w.axes - axis), 1;
END $$;
COMMENT ON FUNCTION kbench_sweep(text, text, text, text, text) IS 'latency along one axis of an operation''s workloads: per implementation, device, dtype and fixed axes, the best run''s median, p20 and p80 at each value';

-- Reading the analytics is for everyone, as reading the catalog is.
GRANT SELECT ON kbench_cohort_runs, kbench_cohorts, kbench_cohort_bests, kbench_record_history, kbench_records,
	kbench_leaders, kbench_series, kbench_devices, kbench_operation_costs, kbench_roofline, kbench_device_observed
	TO PUBLIC;
