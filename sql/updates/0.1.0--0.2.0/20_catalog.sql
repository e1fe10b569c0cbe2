-- 0.2.0, catalog (issue 10 items 3-6, the .zst of 7; issue 11 items 3-5):
-- the set-based store, append-only for the owner too, U+0000 refused,
-- the record history dumped and kept per statement, .zst read by libzstd.

-- The store: one INSERT per kind (sql/22_store.sql) replaces kbench__store.
DROP FUNCTION kbench__store(text, text, jsonb, text, bigint[]);

-- The store: one INSERT ... SELECT ... ON CONFLICT DO NOTHING per kind
-- (src/store.c).  Each function takes the validated, normalized manifests of
-- one kind as arrays, in the order they arrived, stores them, resolves the
-- references that were waiting for them, and returns the digests that were
-- new.  Not for direct use: they store what they are given without
-- validating it (kbench_ingest and the imports validate and digest first).

-- The typed columns of a normalized BenchmarkRun manifest, as kbench_run_of()
-- gives them, written so that the planner inlines it into the store's
-- INSERT (a set-returning SQL function of one SELECT, the measurements read
-- in one pass): no function call per run.
CREATE FUNCTION kbench__run_columns(digest text, manifest jsonb) RETURNS SETOF kbench_run_row
	LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT digest,
	       x.s->>'implementationDigest', x.s->>'workloadDigest', x.s->>'protocolDigest', x.s->>'environmentDigest',
	       (x.s->>'status')::kbench_status,
	       (x.s->>'observedAt')::timestamptz,
	       x.ps,
	       coalesce(kbench__ns(x.l->x.ps), (m.ns)[1],
	                CASE WHEN x.ps IS NULL THEN coalesce(kbench__ns(x.l->'median'), kbench__ns(x.l->'mean')) END),
	       kbench__ns(x.l->'median'), kbench__ns(x.l->'mean'), kbench__ns(x.l->'minimum'), kbench__ns(x.l->'maximum'),
	       kbench__ns(x.l->'mad'),
	       coalesce((m.p20)[1], kbench__ns(x.l->'p05')),
	       coalesce((m.p80)[1], kbench__ns(x.l->'p95')),
	       kbench__ns(x.l->'confidence95'->0), kbench__ns(x.l->'confidence95'->1),
	       (x.s->'timing'->>'samples')::bigint,
	       x.s->'sourceNative'->>'source', x.s->'sourceNative'->>'externalId'
	  FROM (SELECT manifest->'spec' AS s, manifest->'spec'->'timing'->'latencyNs' AS l,
	               coalesce(manifest->'spec'->'timing'->>'primaryStatistic',
	                        manifest->'spec'->'measurements'->0->>'statistic') AS ps
	        OFFSET 0) x             -- spec and latencyNs taken out once, not once per column
	 CROSS JOIN LATERAL (
	       SELECT array_agg(e.ns ORDER BY e.ord) FILTER (WHERE e.statistic = x.ps) AS ns,
	              array_agg(e.ns ORDER BY e.ord) FILTER (WHERE e.statistic = 'p20') AS p20,
	              array_agg(e.ns ORDER BY e.ord) FILTER (WHERE e.statistic = 'p80') AS p80
	         FROM (SELECT t.ord, t.v->>'statistic' AS statistic,
	                      round((t.v->>'value')::numeric * CASE t.v->>'unit'
	                            WHEN 'ns' THEN 1 WHEN 'us' THEN 1e3 WHEN 'ms' THEN 1e6 WHEN 's' THEN 1e9 END)::bigint AS ns
	                 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(x.s->'measurements') = 'array'
	                                                THEN x.s->'measurements' ELSE '[]' END) WITH ORDINALITY t(v, ord)
	                WHERE t.v->>'unit' IN ('ns', 'us', 'ms', 's')
	                  AND t.v->>'metric' IN ('latency', 'time', 'duration', 'score', 'runtime')) e) m
$$;

CREATE FUNCTION kbench__store_operations(d text[], m jsonb[], src text[]) RETURNS SETOF text
	LANGUAGE sql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	WITH ins AS (
		INSERT INTO kbench_operations (digest, name, family, manifest, source)
		SELECT x.d, x.m->'metadata'->>'name', x.m->'spec'->>'family', x.m, x.src
		  FROM unnest(d, m, src) WITH ORDINALITY x(d, m, src, n) ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING digest),
	w AS (
		UPDATE kbench_workloads w SET operation_resolved = true
		  FROM ins WHERE w.operation_digest = ins.digest AND NOT w.operation_resolved),
	i AS (
		UPDATE kbench_implementations i SET operation_resolved = true
		  FROM ins WHERE i.operation_digest = ins.digest AND NOT i.operation_resolved)
	SELECT digest FROM ins
$$;

CREATE FUNCTION kbench__store_projects(d text[], m jsonb[], src text[]) RETURNS SETOF text
	LANGUAGE sql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	INSERT INTO kbench_projects (digest, name, repository, manifest, source)
	SELECT x.d, x.m->'spec'->>'name', x.m->'spec'->>'repository', x.m, x.src
	  FROM unnest(d, m, src) WITH ORDINALITY x(d, m, src, n) ORDER BY x.n
	ON CONFLICT DO NOTHING RETURNING digest
$$;

CREATE FUNCTION kbench__store_workloads(d text[], m jsonb[], src text[], k text[]) RETURNS SETOF text
	LANGUAGE sql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	WITH ins AS (
		INSERT INTO kbench_workloads (digest, kind, name, operation_digest, operation_resolved, axes, dtypes, manifest, source)
		SELECT x.d, x.k, x.m->'metadata'->>'name', x.m->'spec'->>'operationSpecDigest',
		       EXISTS (SELECT 1 FROM kbench_operations o WHERE o.digest = x.m->'spec'->>'operationSpecDigest'),
		       x.m->'spec'->'axes',
		       (SELECT array_agg(DISTINCT t.value->>'dtype' ORDER BY t.value->>'dtype')
		          FROM jsonb_each(CASE WHEN jsonb_typeof(x.m->'spec'->'tensors') = 'object' THEN x.m->'spec'->'tensors' ELSE '{}' END) t),
		       x.m, x.src
		  FROM unnest(d, m, src, k) WITH ORDINALITY x(d, m, src, k, n) ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING digest),
	r AS (
		UPDATE kbench_runs r SET unresolved = array_remove(r.unresolved, 'workload')
		  FROM ins WHERE r.workload_digest = ins.digest AND 'workload' = ANY (r.unresolved))
	SELECT digest FROM ins
$$;

CREATE FUNCTION kbench__store_implementations(d text[], m jsonb[], src text[]) RETURNS SETOF text
	LANGUAGE sql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	WITH ins AS (
		INSERT INTO kbench_implementations (digest, name, operation_digest, operation_resolved, language, version,
		                                    architectures, dtypes, manifest, source)
		SELECT x.d, x.m->'metadata'->>'name', x.m->'spec'->'operation'->>'specDigest',
		       EXISTS (SELECT 1 FROM kbench_operations o WHERE o.digest = x.m->'spec'->'operation'->>'specDigest'),
		       x.m->'spec'->'callable'->>'language', x.m->'spec'->'projectRevision'->>'version',
		       ARRAY(SELECT jsonb_array_elements_text(x.m->'spec'->'support'->'hardwareArchitectures')),
		       ARRAY(SELECT jsonb_array_elements_text(x.m->'spec'->'support'->'dtypes')),
		       x.m, x.src
		  FROM unnest(d, m, src) WITH ORDINALITY x(d, m, src, n) ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING digest),
	r AS (
		UPDATE kbench_runs r SET unresolved = array_remove(r.unresolved, 'implementation')
		  FROM ins WHERE r.implementation_digest = ins.digest AND 'implementation' = ANY (r.unresolved))
	SELECT digest FROM ins
$$;

CREATE FUNCTION kbench__store_protocols(d text[], m jsonb[], src text[]) RETURNS SETOF text
	LANGUAGE sql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	WITH ins AS (
		INSERT INTO kbench_protocols (digest, family, harness, timer, primary_statistic, warmup_ns, name, manifest, source)
		SELECT x.d, p.family, p.harness, p.timer, p.primary_statistic, p.warmup_ns, x.m->'metadata'->>'name', x.m, x.src
		  FROM unnest(d, m, src) WITH ORDINALITY x(d, m, src, n)
		 CROSS JOIN LATERAL kbench_protocol_of(x.d, x.m) p
		 ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING digest),
	r AS (
		UPDATE kbench_runs r SET unresolved = array_remove(r.unresolved, 'protocol')
		  FROM ins WHERE r.protocol_digest = ins.digest AND 'protocol' = ANY (r.unresolved))
	SELECT digest FROM ins
$$;

CREATE FUNCTION kbench__store_environments(d text[], m jsonb[], src text[]) RETURNS SETOF text
	LANGUAGE sql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	WITH ins AS (
		INSERT INTO kbench_environments (digest, vendor, product, architecture, form_factor, memory_bytes,
		                                 driver, cuda_toolkit, name, manifest, source)
		SELECT x.d, e.vendor, e.product, e.architecture, e.form_factor, e.memory_bytes, e.driver, e.cuda_toolkit,
		       x.m->'metadata'->>'name', x.m, x.src
		  FROM unnest(d, m, src) WITH ORDINALITY x(d, m, src, n)
		 CROSS JOIN LATERAL kbench_environment_of(x.d, x.m) e
		 ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING digest),
	r AS (
		UPDATE kbench_runs r SET unresolved = array_remove(r.unresolved, 'environment')
		  FROM ins WHERE r.environment_digest = ins.digest AND 'environment' = ANY (r.unresolved))
	SELECT digest FROM ins
$$;

CREATE FUNCTION kbench__store_serving(d text[], m jsonb[], src text[], k text[]) RETURNS SETOF text
	LANGUAGE sql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	INSERT INTO kbench_serving_manifests (digest, kind, name, manifest, source)
	SELECT x.d, x.k, x.m->'metadata'->>'name', x.m, x.src
	  FROM unnest(d, m, src, k) WITH ORDINALITY x(d, m, src, k, n) ORDER BY x.n
	ON CONFLICT DO NOTHING RETURNING digest
$$;

-- Runs, in arrival order (the record history follows it), with their
-- measurements; raw: the kept raw samples as int8[] text, or NULL.
CREATE FUNCTION kbench__store_runs(d text[], m jsonb[], src text[], raw text[]) RETURNS SETOF text
	LANGUAGE sql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp SET enable_memoize = off SET work_mem = '64MB' AS $$
	WITH ins AS (
		INSERT INTO kbench_runs (digest, implementation_digest, workload_digest, protocol_digest, environment_digest,
		                         status, observed_at, primary_statistic, primary_ns, median_ns, mean_ns, min_ns, max_ns,
		                         mad_ns, p20_ns, p80_ns, ci95_low_ns, ci95_high_ns, samples, source, external_id,
		                         name, manifest, raw_samples_ns, unresolved)
		SELECT x.d, r.implementation_digest, r.workload_digest, r.protocol_digest, r.environment_digest,
		       r.status, r.observed_at, r.primary_statistic, r.primary_ns, r.median_ns, r.mean_ns, r.min_ns, r.max_ns,
		       r.mad_ns, r.p20_ns, r.p80_ns, r.ci95_low_ns, r.ci95_high_ns, r.samples, coalesce(r.source, x.src),
		       r.external_id, x.m->'metadata'->>'name', x.m, x.raw::bigint[],
		       CASE WHEN EXISTS (SELECT 1 FROM kbench_implementations i WHERE i.digest = r.implementation_digest)
		            THEN '{}'::text[] ELSE '{implementation}' END ||
		       CASE WHEN EXISTS (SELECT 1 FROM kbench_workloads w WHERE w.digest = r.workload_digest)
		            THEN '{}'::text[] ELSE '{workload}' END ||
		       CASE WHEN EXISTS (SELECT 1 FROM kbench_protocols p WHERE p.digest = r.protocol_digest)
		            THEN '{}'::text[] ELSE '{protocol}' END ||
		       CASE WHEN EXISTS (SELECT 1 FROM kbench_environments e WHERE e.digest = r.environment_digest)
		            THEN '{}'::text[] ELSE '{environment}' END
		  FROM unnest(d, m, src, raw) WITH ORDINALITY x(d, m, src, raw, n)
		 CROSS JOIN LATERAL kbench__run_columns(x.d, x.m) r
		 ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING digest, manifest->'spec'->'measurements' AS measurements),
	meas AS (
		INSERT INTO kbench_measurements (run_digest, ordinal, metric, unit, statistic, value, sample_count)
		SELECT ins.digest, e.ord::int, e.v->>'metric', e.v->>'unit', e.v->>'statistic', (e.v->>'value')::float8,
		       (e.v->>'sampleCount')::bigint
		  FROM ins CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(ins.measurements) = 'array'
		                                                        THEN ins.measurements ELSE '[]' END) WITH ORDINALITY AS e(v, ord)
		ON CONFLICT DO NOTHING)
	SELECT digest FROM ins
$$;

-- The export's rows that carry no manifest, and its own rows beside the
-- manifests, as they came (first one wins); how many were new.
CREATE FUNCTION kbench__store_catalog_rows(t text[], id text[], r jsonb[]) RETURNS bigint
	LANGUAGE sql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	WITH ins AS (
		INSERT INTO kbench_catalog_rows (table_name, row_id, row)
		SELECT x.t, x.id, x.r FROM unnest(t, id, r) WITH ORDINALITY x(t, id, r, n) ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING 1)
	SELECT count(*) FROM ins
$$;

CREATE FUNCTION kbench__store_source_rows(d text[], t text[], r jsonb[]) RETURNS bigint
	LANGUAGE sql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	WITH ins AS (
		INSERT INTO kbench_catalog_source_rows (digest, table_name, row)
		SELECT x.d, x.t, x.r FROM unnest(d, t, r) WITH ORDINALITY x(d, t, r, n) ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING 1)
	SELECT count(*) FROM ins
$$;

-- The lines an import rejected or skipped, with why.
CREATE FUNCTION kbench__store_rejections(import_id bigint, line bigint[], reason text[], skipped boolean[]) RETURNS bigint
	LANGUAGE sql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	WITH ins AS (
		INSERT INTO kbench_import_rejections (import_id, line, reason, skipped)
		SELECT import_id, x.l, x.r, x.s FROM unnest(line, reason, skipped) WITH ORDINALITY x(l, r, s, n) ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING 1)
	SELECT count(*) FROM ins
$$;

REVOKE EXECUTE ON FUNCTION kbench__store_catalog_rows(text[], text[], jsonb[]), kbench__store_source_rows(text[], text[], jsonb[]),
	kbench__store_rejections(bigint, bigint[], text[], boolean[]) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION kbench__run_columns(text, jsonb), kbench__store_operations(text[], jsonb[], text[]), kbench__store_projects(text[], jsonb[], text[]),
	kbench__store_workloads(text[], jsonb[], text[], text[]), kbench__store_implementations(text[], jsonb[], text[]),
	kbench__store_protocols(text[], jsonb[], text[]), kbench__store_environments(text[], jsonb[], text[]),
	kbench__store_serving(text[], jsonb[], text[], text[]), kbench__store_runs(text[], jsonb[], text[], text[])
	FROM PUBLIC;

-- Append-only for everyone short of a superuser disabling triggers.
CREATE OR REPLACE FUNCTION kbench__immutable() RETURNS trigger
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	o jsonb := to_jsonb(OLD);
	n jsonb := to_jsonb(NEW);
	key text := coalesce(o->>'digest', o->>'run_digest', o->>'row_id');
	changed text;
	withdrawal boolean;
BEGIN
	SELECT string_agg(x.key, ', ' ORDER BY x.key) INTO changed
	  FROM jsonb_each(o) x JOIN jsonb_each(n) y USING (key)
	 WHERE x.value IS DISTINCT FROM y.value AND NOT (x.key = ANY (coalesce(TG_ARGV, '{}')));
	IF changed IS NOT NULL THEN
		RAISE EXCEPTION 'cannot change % of % %', changed, TG_TABLE_NAME, key
			USING ERRCODE = 'restrict_violation',
			      DETAIL = 'Catalog rows are content-addressed and append-only: their manifest and what is derived from it never change.',
			      HINT = CASE WHEN TG_TABLE_NAME = 'kbench_runs'
			                  THEN 'Retract it with kbench_retract() or supersede it with kbench_supersede().'
			                  ELSE 'Ingest the corrected manifest: it gets a digest of its own.' END;
	END IF;
	IF TG_TABLE_NAME = 'kbench_runs' THEN
		IF EXISTS (SELECT 1 FROM unnest(OLD.unresolved) u(ref) WHERE u.ref <> ALL (NEW.unresolved)
		             AND NOT EXISTS (SELECT 1 FROM kbench_implementations t WHERE u.ref = 'implementation' AND t.digest = OLD.implementation_digest
		                             UNION ALL SELECT 1 FROM kbench_workloads t WHERE u.ref = 'workload' AND t.digest = OLD.workload_digest
		                             UNION ALL SELECT 1 FROM kbench_protocols t WHERE u.ref = 'protocol' AND t.digest = OLD.protocol_digest
		                             UNION ALL SELECT 1 FROM kbench_environments t WHERE u.ref = 'environment' AND t.digest = OLD.environment_digest))
		   OR EXISTS (SELECT 1 FROM unnest(NEW.unresolved) u(ref) WHERE u.ref <> ALL (OLD.unresolved)) THEN
			RAISE EXCEPTION 'cannot change unresolved of kbench_runs %', key
				USING ERRCODE = 'restrict_violation',
				      DETAIL = 'A reference is marked resolved by the store when its manifest arrives, and only then.';
		END IF;
		withdrawal := (OLD.retracted_at, OLD.retraction_reason, OLD.superseded_by, OLD.supersession_reason)
		              IS DISTINCT FROM (NEW.retracted_at, NEW.retraction_reason, NEW.superseded_by, NEW.supersession_reason);
		IF withdrawal AND coalesce(pg_catalog.current_setting('kbench.withdrawal', true), '') <> OLD.digest THEN
			RAISE EXCEPTION 'cannot change the retraction or supersession of kbench_runs % by UPDATE', key
				USING ERRCODE = 'restrict_violation',
				      HINT = 'Retract it with kbench_retract() or supersede it with kbench_supersede().';
		END IF;
		IF OLD.retracted_at IS NOT NULL
		   AND (NEW.retracted_at, NEW.retraction_reason) IS DISTINCT FROM (OLD.retracted_at, OLD.retraction_reason) THEN
			RAISE EXCEPTION 'run % is already retracted', OLD.digest
				USING ERRCODE = 'restrict_violation', DETAIL = 'A retraction is permanent.';
		END IF;
		IF OLD.superseded_by IS NOT NULL
		   AND (NEW.superseded_by, NEW.supersession_reason) IS DISTINCT FROM (OLD.superseded_by, OLD.supersession_reason) THEN
			RAISE EXCEPTION 'run % is already superseded by %', OLD.digest, OLD.superseded_by
				USING ERRCODE = 'restrict_violation', DETAIL = 'A supersession is permanent.';
		END IF;
		IF NEW.superseded_by IS DISTINCT FROM OLD.superseded_by
		   AND (NEW.superseded_by = OLD.digest OR NOT EXISTS (SELECT 1 FROM kbench_runs r WHERE r.digest = NEW.superseded_by)) THEN
			RAISE EXCEPTION 'run % is not in the catalog', NEW.superseded_by USING ERRCODE = 'no_data_found';
		END IF;
	ELSIF TG_TABLE_NAME IN ('kbench_workloads', 'kbench_implementations')
	      AND NEW.operation_resolved IS DISTINCT FROM OLD.operation_resolved
	      AND (NOT NEW.operation_resolved
	           OR NOT EXISTS (SELECT 1 FROM kbench_operations t WHERE t.digest = NEW.operation_digest)) THEN
		RAISE EXCEPTION 'cannot change operation_resolved of % %', TG_TABLE_NAME, key
			USING ERRCODE = 'restrict_violation',
			      DETAIL = 'An operation is marked resolved by the store when its manifest arrives, and only then.';
	END IF;
	RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION kbench__no_delete() RETURNS trigger
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	RAISE EXCEPTION 'cannot % %: the catalog is append-only', CASE TG_OP WHEN 'TRUNCATE' THEN 'truncate' ELSE 'delete from' END, TG_TABLE_NAME
		USING ERRCODE = 'restrict_violation',
		      HINT = CASE WHEN TG_TABLE_NAME = 'kbench_runs'
		                  THEN 'Retract the run with kbench_retract(digest, reason); it stays, marked and explained.'
		                  ELSE 'Catalog rows are never deleted.' END;
END $$;

CREATE TRIGGER immutable BEFORE UPDATE ON kbench_measurements
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_catalog_rows
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_catalog_source_rows
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_projects FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_serving_manifests FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_catalog_rows FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_catalog_source_rows FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_operations FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_workloads FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_implementations FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_protocols FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_environments FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_projects FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_serving_manifests FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_catalog_rows FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_catalog_source_rows FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();

CREATE OR REPLACE FUNCTION kbench_retract(run_digest text, reason text) RETURNS kbench_runs
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp AS $$
DECLARE
	r kbench_runs;
BEGIN
	IF reason IS NULL OR btrim(reason) = '' THEN
		RAISE EXCEPTION 'a retraction needs a reason' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	PERFORM pg_catalog.set_config('kbench.withdrawal', run_digest, true);
	UPDATE kbench_runs SET retracted_at = now(), retraction_reason = reason
	 WHERE digest = run_digest RETURNING * INTO r;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'run % is not in the catalog', run_digest USING ERRCODE = 'no_data_found';
	END IF;
	PERFORM pg_catalog.set_config('kbench.withdrawal', '', true);
	RETURN r;
END $$;

-- Supersede a run by a newer one (both stay; the old one points to the new).
CREATE OR REPLACE FUNCTION kbench_supersede(old_digest text, new_digest text, reason text) RETURNS kbench_runs
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp AS $$
DECLARE
	r kbench_runs;
BEGIN
	IF reason IS NULL OR btrim(reason) = '' THEN
		RAISE EXCEPTION 'a supersession needs a reason' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF old_digest = new_digest THEN
		RAISE EXCEPTION 'a run cannot supersede itself' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF NOT EXISTS (SELECT 1 FROM kbench_runs WHERE digest = new_digest) THEN
		RAISE EXCEPTION 'run % is not in the catalog', new_digest USING ERRCODE = 'no_data_found',
			HINT = 'Ingest the superseding run first.';
	END IF;
	PERFORM pg_catalog.set_config('kbench.withdrawal', old_digest, true);
	UPDATE kbench_runs SET superseded_by = new_digest, supersession_reason = reason
	 WHERE digest = old_digest RETURNING * INTO r;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'run % is not in the catalog', old_digest USING ERRCODE = 'no_data_found';
	END IF;
	PERFORM pg_catalog.set_config('kbench.withdrawal', '', true);
	RETURN r;
END $$;


-- Lossless export: raw samples, retractions and supersessions go out and come back.
CREATE FUNCTION kbench__withdraw(run_digest text, retracted_at timestamptz, retraction_reason text,
	superseded_by text, supersession_reason text) RETURNS boolean
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	IF superseded_by IS NOT NULL AND (superseded_by = run_digest
	   OR NOT EXISTS (SELECT 1 FROM kbench_runs r WHERE r.digest = kbench__withdraw.superseded_by)) THEN
		RETURN false;
	END IF;
	PERFORM pg_catalog.set_config('kbench.withdrawal', run_digest, true);
	IF retracted_at IS NOT NULL AND retraction_reason IS NOT NULL THEN
		UPDATE kbench_runs r SET retracted_at = kbench__withdraw.retracted_at, retraction_reason = kbench__withdraw.retraction_reason
		 WHERE r.digest = run_digest AND r.retracted_at IS NULL;
	END IF;
	IF superseded_by IS NOT NULL AND supersession_reason IS NOT NULL THEN
		UPDATE kbench_runs r SET superseded_by = kbench__withdraw.superseded_by, supersession_reason = kbench__withdraw.supersession_reason
		 WHERE r.digest = run_digest AND r.superseded_by IS NULL;
	END IF;
	PERFORM pg_catalog.set_config('kbench.withdrawal', '', true);
	RETURN true;
END $$;
REVOKE EXECUTE ON FUNCTION kbench__withdraw(text, timestamptz, text, text, text) FROM PUBLIC;


CREATE OR REPLACE FUNCTION kbench_export_catalog() RETURNS SETOF text
	LANGUAGE sql STABLE SET search_path = @extschema@, pg_temp AS $$
	SELECT jsonb_build_object('table', t, 'row', row)::text FROM (
		SELECT 1 AS ord, 'operations' AS t, o.digest,
		       coalesce(s.row, '{}') || jsonb_build_object('semanticDigest', o.digest, 'manifest', o.manifest) AS row
		  FROM kbench_operations o LEFT JOIN kbench_catalog_source_rows s ON s.table_name = 'operations' AND s.digest = o.digest
		UNION ALL
		SELECT 2, 'projects', p.digest, coalesce(s.row, '{}') || jsonb_build_object('manifest', p.manifest)
		  FROM kbench_projects p LEFT JOIN kbench_catalog_source_rows s ON s.table_name = 'projects' AND s.digest = p.digest
		UNION ALL
		SELECT 3, 'workloads', w.digest,
		       coalesce(s.row, '{}') || jsonb_build_object('workloadDigest', w.digest, 'manifest', w.manifest)
		  FROM kbench_workloads w LEFT JOIN kbench_catalog_source_rows s ON s.table_name = 'workloads' AND s.digest = w.digest
		UNION ALL
		SELECT 4, 'implementations', i.digest,
		       coalesce(s.row, '{}') || jsonb_build_object('implementationDigest', i.digest, 'manifest', i.manifest)
		  FROM kbench_implementations i LEFT JOIN kbench_catalog_source_rows s ON s.table_name = 'implementations' AND s.digest = i.digest
		UNION ALL
		SELECT 5, 'benchmark_runs', r.digest,
		       coalesce(s.row, '{}') || jsonb_build_object('runDigest', r.digest, 'manifest',
		           jsonb_build_object('run', r.manifest, 'protocol', p.manifest, 'environment', e.manifest))
		       || CASE WHEN r.raw_samples_ns IS NOT NULL
		               THEN jsonb_build_object('rawSamplesNs', to_jsonb(r.raw_samples_ns)) ELSE '{}' END
		       || CASE WHEN r.retracted_at IS NOT NULL
		               THEN jsonb_build_object('retractedAt', to_char(r.retracted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
		                                       'retractionReason', r.retraction_reason) ELSE '{}' END
		       || CASE WHEN r.superseded_by IS NOT NULL
		               THEN jsonb_build_object('supersededBy', r.superseded_by, 'supersessionReason', r.supersession_reason) ELSE '{}' END
		  FROM kbench_runs r
		  JOIN kbench_protocols p ON p.digest = r.protocol_digest
		  JOIN kbench_environments e ON e.digest = r.environment_digest
		  LEFT JOIN kbench_catalog_source_rows s ON s.table_name = 'benchmark_runs' AND s.digest = r.digest
		UNION ALL
		SELECT 6, CASE m.kind WHEN 'ServingRun' THEN 'serving_runs' WHEN 'ServingConfiguration' THEN 'serving_configurations'
		                      WHEN 'ServingStackRevision' THEN 'serving_stack_revisions' WHEN 'ServingWorkload' THEN 'serving_workloads'
		                      ELSE 'model_revisions' END, m.digest,
		       coalesce(s.row, '{}') || jsonb_build_object(CASE m.kind WHEN 'ServingRun' THEN 'runDigest'
		           WHEN 'ServingConfiguration' THEN 'configurationDigest' WHEN 'ServingStackRevision' THEN 'stackDigest'
		           WHEN 'ServingWorkload' THEN 'workloadDigest' ELSE 'modelDigest' END, m.digest, 'manifest', m.manifest)
		  FROM kbench_serving_manifests m
		  LEFT JOIN kbench_catalog_source_rows s ON s.digest = m.digest AND s.table_name LIKE 'serving%' OR s.digest = m.digest AND s.table_name = 'model_revisions'
		UNION ALL
		SELECT 7, c.table_name, c.row_id, c.row FROM kbench_catalog_rows c
	) x ORDER BY ord, digest
$$;


-- .zst read by libzstd, no shell.
CREATE OR REPLACE FUNCTION kbench_import_catalog(path text,
	OUT import_id bigint, OUT lines bigint, OUT inserted bigint, OUT present bigint, OUT skipped bigint, OUT rejected bigint)
	RETURNS record AS 'MODULE_PATHNAME', 'kbench_import_catalog_file' LANGUAGE C VOLATILE;


-- Records and history, per statement.
CREATE OR REPLACE FUNCTION kbench__records_after_insert() RETURNS trigger
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

DROP TRIGGER records ON kbench_runs;
CREATE TRIGGER records AFTER INSERT ON kbench_runs REFERENCING NEW TABLE AS kbench_new_runs
	FOR EACH STATEMENT EXECUTE FUNCTION kbench__records_after_insert();


SELECT pg_catalog.pg_extension_config_dump('kbench_record_history', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_record_history_id_seq', '');
