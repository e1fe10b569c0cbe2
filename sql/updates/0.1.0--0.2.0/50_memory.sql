-- 0.2.0: memory as a measurement (issue 15): Liger's memory rows kept as
-- memory observations (sql/15_memory.sql), their counts in kbench_imports,
-- their rows in the catalog export (sql/20_catalog.sql), and the memory
-- analytics (sql/45_memory_analytics.sql).  An updated database has no
-- memory observations yet: importing the Liger CSV again adds them (its
-- runs are already there).

CREATE TABLE kbench_memory_observations (
	source text NOT NULL,                 -- who measured: 'liger-kernel-bench'
	external_id text NOT NULL,            -- the source's identity of the measurement (as a run's sourceNative.externalId)
	operation_digest text NOT NULL,
	workload_digest text NOT NULL,
	implementation_digest text NOT NULL,
	protocol_digest text NOT NULL,        -- the timed pass the memory was measured on
	environment_digest text NOT NULL,
	pass text NOT NULL,                   -- forward, backward or full
	p50_bytes bigint NOT NULL,            -- the median peak, in bytes
	p20_bytes bigint,                     -- the spread, when the source gives one
	p80_bytes bigint,
	liger_version text,                   -- the Liger-Kernel release that ran
	observed_at timestamptz NOT NULL,     -- milliseconds at most
	source_line bigint,                   -- the physical line of the CSV it came from
	ingested_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (source, external_id),
	CHECK (operation_digest ~ '^sha256:[0-9a-f]{64}$' AND workload_digest ~ '^sha256:[0-9a-f]{64}$'
	       AND implementation_digest ~ '^sha256:[0-9a-f]{64}$' AND protocol_digest ~ '^sha256:[0-9a-f]{64}$'
	       AND environment_digest ~ '^sha256:[0-9a-f]{64}$'),
	CHECK (pass IN ('forward', 'backward', 'full')),
	CHECK (p50_bytes > 0 AND p20_bytes > 0 AND p80_bytes > 0),
	CHECK ((p20_bytes IS NULL) = (p80_bytes IS NULL)),
	CHECK (source <> '' AND external_id <> ''),
	CHECK (date_trunc('milliseconds', observed_at) = observed_at),
	CHECK (source_line > 0)
);
CREATE INDEX ON kbench_memory_observations (workload_digest, protocol_digest, environment_digest, implementation_digest);
CREATE INDEX ON kbench_memory_observations (operation_digest);
COMMENT ON TABLE kbench_memory_observations IS 'peak device memory measured beside a timing (Liger''s memory rows), in bytes, with the digests of what was measured; append-only';

-- Refuse UPDATE, DELETE and TRUNCATE: observations are never changed or removed.
CREATE FUNCTION kbench__memory_append_only() RETURNS trigger
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	RAISE EXCEPTION 'cannot % kbench_memory_observations: memory observations are append-only', lower(TG_OP)
		USING ERRCODE = 'restrict_violation',
		      DETAIL = 'A memory observation records a measurement; it is never changed or removed.',
		      HINT = 'Import the corrected measurement under an external id of its own.';
END $$;
REVOKE EXECUTE ON FUNCTION kbench__memory_append_only() FROM PUBLIC;

CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON kbench_memory_observations
	FOR EACH ROW EXECUTE FUNCTION kbench__memory_append_only();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_memory_observations
	FOR EACH STATEMENT EXECUTE FUNCTION kbench__memory_append_only();

-- One memory_observations row of a catalog export (its manifests already
-- stored by the caller): 'inserted', 'present', or why it is rejected.
-- Internal: src/memory.c calls it.
CREATE FUNCTION kbench__memory_import(r jsonb, OUT outcome text)
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	n int;
	bad text;
	at timestamptz;
BEGIN
	SELECT string_agg(k || CASE WHEN want = 'number' THEN ' (a whole number)' ELSE ' (a string)' END, ', ' ORDER BY ord) INTO bad
	  FROM (VALUES (1, 'source', 'string', true), (2, 'externalId', 'string', true),
	               (3, 'operationDigest', 'string', true), (4, 'workloadDigest', 'string', true),
	               (5, 'implementationDigest', 'string', true), (6, 'protocolDigest', 'string', true),
	               (7, 'environmentDigest', 'string', true), (8, 'pass', 'string', true),
	               (9, 'p50Bytes', 'number', true), (10, 'p20Bytes', 'number', false), (11, 'p80Bytes', 'number', false),
	               (12, 'ligerVersion', 'string', false), (13, 'observedAt', 'string', true),
	               (14, 'sourceLine', 'number', false)) f(ord, k, want, required)
	 WHERE CASE WHEN r->k IS NULL OR jsonb_typeof(r->k) = 'null' THEN required
	            WHEN jsonb_typeof(r->k) <> want THEN true
	            WHEN want = 'number' THEN (r->>k)::numeric <> trunc((r->>k)::numeric)
	            ELSE false END;
	IF bad IS NOT NULL THEN
		outcome := 'invalid memory observation: needs ' || bad;
		RETURN;
	END IF;
	-- what it names must agree with the catalog, where the catalog knows it
	SELECT string_agg(what, '; ') INTO bad FROM (
		SELECT format('its workload is of operation %s, not %s', w.operation_digest, r->>'operationDigest') AS what
		  FROM kbench_workloads w WHERE w.digest = r->>'workloadDigest' AND w.operation_digest <> r->>'operationDigest'
		UNION ALL
		SELECT format('its implementation is of operation %s, not %s', i.operation_digest, r->>'operationDigest')
		  FROM kbench_implementations i WHERE i.digest = r->>'implementationDigest' AND i.operation_digest <> r->>'operationDigest'
		UNION ALL
		SELECT format('pass %s, but its protocol %s times %s', r->>'pass', p.name, coalesce(kbench_protocol_mode(p.name), 'another pass'))
		  FROM kbench_protocols p WHERE p.digest = r->>'protocolDigest' AND kbench_protocol_mode(p.name) IS DISTINCT FROM r->>'pass') x;
	IF bad IS NOT NULL THEN
		outcome := 'invalid memory observation: ' || bad;
		RETURN;
	END IF;
	BEGIN
		at := (r->>'observedAt')::timestamptz;
		IF pg_catalog.to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') <> r->>'observedAt' THEN
			outcome := format('invalid memory observation: observedAt %s is not an ISO 8601 UTC instant with milliseconds (2024-09-03T15:31:42.000Z)',
			                  r->>'observedAt');
			RETURN;
		END IF;
		INSERT INTO kbench_memory_observations (source, external_id, operation_digest, workload_digest,
		                                        implementation_digest, protocol_digest, environment_digest, pass,
		                                        p50_bytes, p20_bytes, p80_bytes, liger_version, observed_at, source_line)
		VALUES (r->>'source', r->>'externalId', r->>'operationDigest', r->>'workloadDigest',
		        r->>'implementationDigest', r->>'protocolDigest', r->>'environmentDigest', r->>'pass',
		        (r->>'p50Bytes')::bigint, (r->>'p20Bytes')::bigint, (r->>'p80Bytes')::bigint, r->>'ligerVersion',
		        at, (r->>'sourceLine')::bigint)
		ON CONFLICT DO NOTHING;
		GET DIAGNOSTICS n = ROW_COUNT;
	EXCEPTION WHEN data_exception OR integrity_constraint_violation THEN
		outcome := 'invalid memory observation: ' || SQLERRM;
		RETURN;
	END;
	outcome := CASE WHEN n > 0 THEN 'inserted' ELSE 'present' END;
END $$;
REVOKE EXECUTE ON FUNCTION kbench__memory_import(jsonb) FROM PUBLIC;

-- A memory observation as a row of the catalog export, carrying its
-- protocol's and environment's manifests (the export has no table of its
-- own for them; the other three travel in theirs).
CREATE FUNCTION kbench__memory_export_row(m kbench_memory_observations, protocol jsonb, environment jsonb)
	RETURNS jsonb LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp
	RETURN jsonb_strip_nulls(jsonb_build_object(
		'source', m.source, 'externalId', m.external_id,
		'operationDigest', m.operation_digest, 'workloadDigest', m.workload_digest,
		'implementationDigest', m.implementation_digest, 'protocolDigest', m.protocol_digest,
		'environmentDigest', m.environment_digest, 'pass', m.pass,
		'p50Bytes', m.p50_bytes, 'p20Bytes', m.p20_bytes, 'p80Bytes', m.p80_bytes,
		'ligerVersion', m.liger_version,
		'observedAt', to_char(m.observed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
		'sourceLine', m.source_line))
	|| jsonb_strip_nulls(jsonb_build_object('protocol', protocol, 'environment', environment));

SELECT pg_catalog.pg_extension_config_dump('kbench_memory_observations', '');

GRANT SELECT ON kbench_memory_observations TO PUBLIC;

ALTER TABLE kbench_imports
	ADD COLUMN memory_inserted bigint NOT NULL DEFAULT 0,
	ADD COLUMN memory_present bigint NOT NULL DEFAULT 0,
	ADD COLUMN memory_rejected bigint NOT NULL DEFAULT 0;

-- The catalog as JSON lines in the kernelindex.dev export format
-- ({"table": ..., "row": {...}}), which re-import to the same rows and digests.
-- Rows that came from an export keep that export's columns.  A run's kept
-- raw samples (rawSamplesNs), its retraction (retractedAt, retractionReason)
-- and supersession (supersededBy, supersessionReason) go out in its row and
-- come back in through kbench_import_catalog: export, import into an empty
-- database and export again gives the same bytes.
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
		       coalesce(s.row, '{}') || kbench_reproduction_marks(r.digest) || jsonb_build_object('runDigest', r.digest, 'manifest',
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
		UNION ALL
		SELECT 8, 'memory_observations', m.source || '/' || m.external_id, kbench__memory_export_row(m, p.manifest, e.manifest)
		  FROM kbench_memory_observations m
		  LEFT JOIN kbench_protocols p ON p.digest = m.protocol_digest
		  LEFT JOIN kbench_environments e ON e.digest = m.environment_digest
	) x ORDER BY ord, digest
$$;

-- Every peak memory value with its cohort and what names it.
CREATE VIEW kbench_memory AS
SELECT m.workload_digest, m.protocol_digest, m.environment_digest,
       m.operation_digest,                -- the workload's own (checked when it is stored)
       o.name AS operation, m.pass AS mode, w.name AS workload, w.axes,
       kbench__float_dtype(w.dtypes) AS dtype, e.product, e.form_factor,
       m.implementation_digest, i.name AS implementation,
       'observation'::text AS origin, m.source || '/' || m.external_id AS ref,
       m.p50_bytes AS peak_bytes, m.p20_bytes, m.p80_bytes, m.observed_at
  FROM kbench_memory_observations m
  LEFT JOIN kbench_workloads w ON w.digest = m.workload_digest
  LEFT JOIN kbench_operations o ON o.digest = m.operation_digest
  LEFT JOIN kbench_environments e ON e.digest = m.environment_digest
  LEFT JOIN kbench_implementations i ON i.digest = m.implementation_digest
UNION ALL
SELECT r.workload_digest, r.protocol_digest, r.environment_digest,
       w.operation_digest, o.name, kbench_protocol_mode(p.name), w.name, w.axes,
       kbench__float_dtype(w.dtypes), e.product, e.form_factor,
       r.implementation_digest, i.name,
       'run', r.digest,
       pm.bytes, NULL::bigint, NULL::bigint, r.observed_at
  FROM kbench_runs r
  -- per run, so that a query about one operation reads only its runs' measurements
  CROSS JOIN LATERAL (SELECT round(x.value)::bigint AS bytes FROM kbench_measurements x
                       WHERE x.run_digest = r.digest AND x.metric = 'peak_memory' AND x.unit = 'bytes'
                         AND x.value >= 0 AND x.value < 9.2e18
                       ORDER BY x.ordinal LIMIT 1) pm
  LEFT JOIN kbench_workloads w ON w.digest = r.workload_digest
  LEFT JOIN kbench_operations o ON o.digest = w.operation_digest
  LEFT JOIN kbench_protocols p ON p.digest = r.protocol_digest
  LEFT JOIN kbench_environments e ON e.digest = r.environment_digest
  LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
 WHERE kbench_competes(r);
COMMENT ON VIEW kbench_memory IS 'every peak memory value in bytes: memory observations (origin observation) and competing runs'' peak_memory measurements (origin run), with their cohort and names';

-- Per cohort, each implementation's lowest peak memory, ranked: rank 1 uses
-- the least memory (equal bytes share a rank); vs_leader is peak / the
-- leader's peak.  The names a cohort determines (operation, mode, workload,
-- dtype, device) are in the DISTINCT ON and PARTITION BY lists too: it
-- changes no group, and lets a filter on them reach the tables before the
-- ranking (WHERE operation = ... reads only that operation's values).
CREATE VIEW kbench_memory_records AS
SELECT b.workload_digest, b.protocol_digest, b.environment_digest, b.operation_digest,
       b.operation, b.mode, b.workload, b.axes, b.dtype, b.product, b.form_factor,
       b.implementation_digest, b.implementation, b.origin, b.ref,
       b.peak_bytes, round(b.peak_bytes / 1048576.0, 3) AS peak_mib, b.p20_bytes, b.p80_bytes, b.observed_at,
       rank() OVER (PARTITION BY b.workload_digest, b.protocol_digest, b.environment_digest,
                                 b.operation_digest, b.operation, b.mode, b.workload, b.dtype, b.product, b.form_factor
                    ORDER BY b.peak_bytes) AS rank,
       first_value(b.ref) OVER cohort = b.ref AS leader,
       round(b.peak_bytes::numeric / nullif(first_value(b.peak_bytes) OVER cohort, 0), 3) AS vs_leader
  FROM (SELECT DISTINCT ON (m.workload_digest, m.protocol_digest, m.environment_digest, m.implementation_digest,
                            m.operation_digest, m.operation, m.mode, m.workload, m.dtype, m.product, m.form_factor) m.*
          FROM kbench_memory m
         ORDER BY m.workload_digest, m.protocol_digest, m.environment_digest, m.implementation_digest,
                  m.operation_digest, m.operation, m.mode, m.workload, m.dtype, m.product, m.form_factor,
                  m.peak_bytes, m.observed_at, m.ref) b
WINDOW cohort AS (PARTITION BY b.workload_digest, b.protocol_digest, b.environment_digest,
                               b.operation_digest, b.operation, b.mode, b.workload, b.dtype, b.product, b.form_factor
                  ORDER BY b.peak_bytes, b.observed_at, b.ref);
COMMENT ON VIEW kbench_memory_records IS 'per cohort, each implementation''s lowest peak memory in bytes, ranked (rank 1: least memory; equal bytes share a rank)';

-- The same for one operation (by name, short name or digest), mode and
-- device, as the other analytics name them.  The filters are on the view's
-- partition keys, so they reach the tables before the ranking.
CREATE FUNCTION kbench_memory_records_of(operation text, mode text DEFAULT NULL, environment text DEFAULT NULL)
	RETURNS SETOF kbench_memory_records
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
DECLARE
	ops text[] := kbench__resolve_operation(operation);
	protos text[] := kbench__resolve_protocols(mode);
	envs text[] := kbench__resolve_environments(environment);
BEGIN
	RETURN QUERY
	SELECT r.* FROM kbench_memory_records r
	 WHERE r.operation_digest = ANY (ops)
	   AND (protos IS NULL OR r.protocol_digest = ANY (protos))
	   AND (envs IS NULL OR r.environment_digest = ANY (envs))
	 ORDER BY r.product, r.form_factor, r.mode, r.dtype, kbench__axes_key(r.axes), r.workload, r.rank, r.implementation;
END $$;
COMMENT ON FUNCTION kbench_memory_records_of(text, text, text) IS 'kbench_memory_records of one operation (name, short name or digest), optionally one mode and device';

-- Per workload (and protocol, device) where both have peak memory: the
-- baseline's and the candidate's lowest peak, memory_ratio = candidate /
-- baseline (below 1: the candidate needs less memory), and beside it the
-- speedup of the same cohort as kbench_speedup() computes it (baseline
-- median / candidate median), when both are timed there too.
CREATE FUNCTION kbench_memory_ratio(operation text, baseline text, candidate text,
                                    mode text DEFAULT NULL, environment text DEFAULT NULL)
	RETURNS TABLE (workload text, axes jsonb, dtype text, protocol text, device text,
	               baseline_implementation text, baseline_ref text, baseline_peak_bytes bigint,
	               candidate_implementation text, candidate_ref text, candidate_peak_bytes bigint,
	               memory_ratio float8, speedup float8)
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
#variable_conflict use_column
DECLARE
	ops text[] := kbench__resolve_operation(operation);
	base text[] := kbench__resolve_implementation(ops, baseline, 'baseline');
	cand text[] := kbench__resolve_implementation(ops, candidate, 'candidate');
	protos text[] := kbench__resolve_protocols(mode);
	envs text[] := kbench__resolve_environments(environment);
BEGIN
	RETURN QUERY
	WITH mem AS (
		SELECT DISTINCT ON (m.workload_digest, m.protocol_digest, m.environment_digest, m.implementation_digest = ANY (base))
		       m.workload_digest, m.protocol_digest, m.environment_digest, m.implementation_digest = ANY (base) AS is_base,
		       m.implementation_digest, m.ref, m.peak_bytes
		  FROM kbench_memory m
		 WHERE m.operation_digest = ANY (ops)
		   AND (m.implementation_digest = ANY (base) OR m.implementation_digest = ANY (cand))
		   AND (protos IS NULL OR m.protocol_digest = ANY (protos))
		   AND (envs IS NULL OR m.environment_digest = ANY (envs))
		 ORDER BY m.workload_digest, m.protocol_digest, m.environment_digest, m.implementation_digest = ANY (base),
		          m.peak_bytes, m.observed_at, m.ref
	), timed AS (
		SELECT DISTINCT ON (b.workload_digest, b.protocol_digest, b.environment_digest, b.implementation_digest = ANY (base))
		       b.workload_digest, b.protocol_digest, b.environment_digest, b.implementation_digest = ANY (base) AS is_base,
		       coalesce(r.median_ns, r.primary_ns) AS median_ns
		  FROM kbench_cohort_bests b
		  JOIN kbench_runs r ON r.digest = b.run_digest
		 WHERE (b.implementation_digest = ANY (base) OR b.implementation_digest = ANY (cand))
		   AND b.workload_digest IN (SELECT mem.workload_digest FROM mem)
		 ORDER BY b.workload_digest, b.protocol_digest, b.environment_digest, b.implementation_digest = ANY (base),
		          b.primary_ns, b.observed_at, b.run_digest
	)
	SELECT w.name, w.axes, kbench__float_dtype(w.dtypes), p.name, concat_ws(' ', e.product, e.form_factor),
	       bi.name, bm.ref, bm.peak_bytes, ci.name, cm.ref, cm.peak_bytes,
	       cm.peak_bytes::float8 / nullif(bm.peak_bytes, 0),
	       bt.median_ns::float8 / nullif(ct.median_ns, 0)
	  FROM mem bm
	  JOIN mem cm ON cm.workload_digest = bm.workload_digest AND cm.protocol_digest = bm.protocol_digest
	             AND cm.environment_digest = bm.environment_digest AND NOT cm.is_base
	  LEFT JOIN timed bt ON bt.workload_digest = bm.workload_digest AND bt.protocol_digest = bm.protocol_digest
	                    AND bt.environment_digest = bm.environment_digest AND bt.is_base
	  LEFT JOIN timed ct ON ct.workload_digest = bm.workload_digest AND ct.protocol_digest = bm.protocol_digest
	                    AND ct.environment_digest = bm.environment_digest AND NOT ct.is_base
	  LEFT JOIN kbench_workloads w ON w.digest = bm.workload_digest
	  LEFT JOIN kbench_protocols p ON p.digest = bm.protocol_digest
	  LEFT JOIN kbench_environments e ON e.digest = bm.environment_digest
	  LEFT JOIN kbench_implementations bi ON bi.digest = bm.implementation_digest
	  LEFT JOIN kbench_implementations ci ON ci.digest = cm.implementation_digest
	 WHERE bm.is_base
	 ORDER BY 5, 4, 3, kbench__axes_key(w.axes), 1;
END $$;
COMMENT ON FUNCTION kbench_memory_ratio(text, text, text, text, text) IS 'per workload (and protocol, device): baseline and candidate lowest peak memory in one cohort, memory_ratio = candidate / baseline, and the speedup of the same cohort';

-- The geometric mean of the memory ratios (and of the speedups beside them)
-- along each sweep: one row per protocol, device and dtype.
CREATE FUNCTION kbench_memory_ratio_summary(operation text, baseline text, candidate text,
                                            mode text DEFAULT NULL, environment text DEFAULT NULL)
	RETURNS TABLE (protocol text, device text, dtype text, workloads bigint,
	               geomean_memory_ratio float8, min_memory_ratio float8, max_memory_ratio float8,
	               geomean_speedup float8)
	LANGUAGE sql STABLE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	SELECT s.protocol, s.device, s.dtype, count(*), kbench_geomean(s.memory_ratio), min(s.memory_ratio),
	       max(s.memory_ratio), kbench_geomean(s.speedup)
	  FROM kbench_memory_ratio(operation, baseline, candidate, mode, environment) s
	 GROUP BY 1, 2, 3 ORDER BY 2, 1, 3
$$;
COMMENT ON FUNCTION kbench_memory_ratio_summary(text, text, text, text, text) IS 'geometric mean, min and max of kbench_memory_ratio() per protocol, device and dtype, with the geometric mean speedup';

-- Peak memory along one axis (what kbench_sweep() is for latency): per
-- implementation, device, dtype and the other axes' values, the lowest peak
-- at each value of the axis.
CREATE FUNCTION kbench_memory_sweep(operation text, mode text, axis text, environment text DEFAULT NULL,
                                    implementation text DEFAULT NULL)
	RETURNS TABLE (axis_value numeric, implementation_name text, device text, dtype text, fixed_axes jsonb,
	               peak_bytes bigint, p20_bytes bigint, p80_bytes bigint, ref text, observed_at timestamptz)
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
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
	SELECT (r.axes ->> axis)::numeric, coalesce(r.implementation, r.implementation_digest),
	       concat_ws(' ', r.product, r.form_factor), r.dtype, r.axes - axis,
	       r.peak_bytes, r.p20_bytes, r.p80_bytes, r.ref, r.observed_at
	  FROM kbench_memory_records_of(operation, mode, environment) r
	 WHERE r.axes ? axis
	   AND (impls IS NULL OR r.implementation_digest = ANY (impls))
	 ORDER BY 3, 2, 4, kbench__axes_key(r.axes - axis), 1;
END $$;
COMMENT ON FUNCTION kbench_memory_sweep(text, text, text, text, text) IS 'peak memory along one axis of an operation''s workloads: per implementation, device, dtype and fixed axes, the lowest peak (bytes) at each value';

GRANT SELECT ON kbench_memory, kbench_memory_records TO PUBLIC;
