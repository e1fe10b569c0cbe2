-- The store: one INSERT ... SELECT ... ON CONFLICT DO NOTHING per kind
-- (src/store.c), of the manifests not stored yet: a manifest already there
-- (a job's operation, workload, implementation, protocol and environment,
-- stored by the job before) is told by one probe of the digest index, not
-- by a speculative insertion that forms, compresses and TOASTs its row and
-- then discards it (nor by the columns worked out of it first); ON
-- CONFLICT still settles two sessions storing one at once.  Each function
-- takes the validated, normalized manifests of one kind as arrays, in the
-- order they arrived, stores them, resolves the references that were
-- waiting for them, and returns the digests that were new.  Not for direct
-- use: they store what they are given without validating it (kbench_ingest
-- and the imports validate and digest first).
--
-- The kinds' functions are plpgsql with a generic plan (issue 31 item 2):
-- plpgsql keeps each statement's plan for the session (re-planned when what
-- it reads changes: a table, an index, a function replaced by ALTER
-- EXTENSION UPDATE), where a LANGUAGE sql function with SET clauses is
-- parsed and planned again at every call (8.7 ms of a trivial job's worker
-- CPU, three quarters of it here).  force_generic_plan: the custom plans of
-- the first calls would win on cost for ever (a custom plan sees the
-- array's length, one run; the generic one guesses ten) and be planned at
-- every call too.  The plan does not depend on how many are stored: each
-- INSERT ... SELECT FROM unnest() is the same loop for one run or ten
-- thousand.
--
-- Nor on how big the tables were when it was made (2026-12-07): a generic
-- plan made while kbench_runs is empty or small (the worker's first job)
-- chose a hash anti join over a sequential scan of every stored run for the
-- "already there?" probe, and a scan of kbench_runs for each of the four
-- UPDATEs of waiting references, run even when nothing new was stored; the
-- worker kept those plans until an ANALYZE of the table invalidated them
-- (5 sequential scans of kbench_runs a trivial job at 200 runs).  The
-- probe is a LATERAL ... LIMIT 1 (a per-manifest lookup the planner cannot
-- turn into a join over the table), sequential scans are off inside these
-- functions (the probe and the UPDATEs are index scans at any size; and JIT
-- off, as a scan that must stay sequential, of a table with no index for it,
-- costs 1e10 and was compiled: 40 ms in a trigger's EXISTS), and
-- the references are resolved only when something was stored, through the
-- partial index of runs with unresolved references.  sql/store_plans.sql
-- checks it by the statistics of one transaction.

-- The typed columns of a normalized BenchmarkRun manifest, as kbench_run_of()
-- gives them, written so that the planner inlines it into the store's
-- INSERT (a set-returning SQL function of one SELECT, the measurements read
-- in one pass): no function call per run.
CREATE OR REPLACE FUNCTION _kernelindex.run_columns(digest text, manifest jsonb) RETURNS SETOF kbench_run_row
	LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT digest,
	       x.s->>'implementationDigest', x.s->>'workloadDigest', x.s->>'protocolDigest', x.s->>'environmentDigest',
	       (x.s->>'status')::kbench_status,
	       (x.s->>'observedAt')::timestamptz,
	       x.ps,
	       coalesce(_kernelindex.ns(x.l->x.ps), (m.ns)[1],
	                CASE WHEN x.ps IS NULL THEN coalesce(_kernelindex.ns(x.l->'median'), _kernelindex.ns(x.l->'mean')) END),
	       _kernelindex.ns(x.l->'median'), _kernelindex.ns(x.l->'mean'), _kernelindex.ns(x.l->'minimum'), _kernelindex.ns(x.l->'maximum'),
	       _kernelindex.ns(x.l->'mad'),
	       coalesce((m.p20)[1], _kernelindex.ns(x.l->'p05')),
	       coalesce((m.p80)[1], _kernelindex.ns(x.l->'p95')),
	       _kernelindex.ns(x.l->'confidence95'->0), _kernelindex.ns(x.l->'confidence95'->1),
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

CREATE OR REPLACE FUNCTION _kernelindex.store_operations(d text[], m jsonb[], src text[]) RETURNS SETOF text
	LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
	stored text[];
BEGIN
	WITH ins AS (
		INSERT INTO kbench_operations (digest, name, family, manifest, source)
		SELECT x.d, x.m->'metadata'->>'name', x.m->'spec'->>'family', x.m, x.src
		  FROM unnest(d, m, src) WITH ORDINALITY x(d, m, src, n)
		 LEFT JOIN LATERAL (SELECT true AS found FROM kbench_operations have WHERE have.digest = x.d LIMIT 1) have ON true
		 WHERE have.found IS NULL
		 ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING digest)
	SELECT array_agg(ins.digest) INTO stored FROM ins;
	IF stored IS NOT NULL THEN
		UPDATE kbench_workloads w SET operation_resolved = true
		 WHERE w.operation_digest = ANY (stored) AND NOT w.operation_resolved;
		UPDATE kbench_implementations i SET operation_resolved = true
		 WHERE i.operation_digest = ANY (stored) AND NOT i.operation_resolved;
		RETURN QUERY SELECT unnest(stored);
	END IF;
END
$$;

CREATE OR REPLACE FUNCTION _kernelindex.store_projects(d text[], m jsonb[], src text[]) RETURNS SETOF text
	LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
BEGIN
	RETURN QUERY
	WITH ins AS (
		INSERT INTO kbench_projects (digest, name, repository, manifest, source)
		SELECT x.d, x.m->'spec'->>'name', x.m->'spec'->>'repository', x.m, x.src
		  FROM unnest(d, m, src) WITH ORDINALITY x(d, m, src, n)
		 LEFT JOIN LATERAL (SELECT true AS found FROM kbench_projects have WHERE have.digest = x.d LIMIT 1) have ON true
		 WHERE have.found IS NULL
		 ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING digest)
	SELECT digest FROM ins;
END
$$;

CREATE OR REPLACE FUNCTION _kernelindex.store_workloads(d text[], m jsonb[], src text[], k text[]) RETURNS SETOF text
	LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
	stored text[];
BEGIN
	WITH ins AS (
		INSERT INTO kbench_workloads (digest, kind, name, operation_digest, operation_resolved, axes, dtypes, manifest, source)
		SELECT x.d, x.k, x.m->'metadata'->>'name', x.m->'spec'->>'operationSpecDigest',
		       EXISTS (SELECT 1 FROM kbench_operations o WHERE o.digest = x.m->'spec'->>'operationSpecDigest'),
		       x.m->'spec'->'axes',
		       (SELECT array_agg(DISTINCT t.value->>'dtype' ORDER BY t.value->>'dtype')
		          FROM jsonb_each(CASE WHEN jsonb_typeof(x.m->'spec'->'tensors') = 'object' THEN x.m->'spec'->'tensors' ELSE '{}' END) t),
		       x.m, x.src
		  FROM unnest(d, m, src, k) WITH ORDINALITY x(d, m, src, k, n)
		 LEFT JOIN LATERAL (SELECT true AS found FROM kbench_workloads have WHERE have.digest = x.d LIMIT 1) have ON true
		 WHERE have.found IS NULL
		 ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING digest)
	SELECT array_agg(ins.digest) INTO stored FROM ins;
	IF stored IS NOT NULL THEN
		UPDATE kbench_runs r SET unresolved = array_remove(r.unresolved, 'workload')
		 WHERE cardinality(r.unresolved) > 0 AND r.workload_digest = ANY (stored) AND 'workload' = ANY (r.unresolved);
		RETURN QUERY SELECT unnest(stored);
	END IF;
END
$$;

CREATE OR REPLACE FUNCTION _kernelindex.store_implementations(d text[], m jsonb[], src text[]) RETURNS SETOF text
	LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
	stored text[];
BEGIN
	WITH ins AS (
		INSERT INTO kbench_implementations (digest, name, operation_digest, operation_resolved, language, version,
		                                    architectures, dtypes, manifest, source)
		SELECT x.d, x.m->'metadata'->>'name', x.m->'spec'->'operation'->>'specDigest',
		       EXISTS (SELECT 1 FROM kbench_operations o WHERE o.digest = x.m->'spec'->'operation'->>'specDigest'),
		       x.m->'spec'->'callable'->>'language', x.m->'spec'->'projectRevision'->>'version',
		       ARRAY(SELECT jsonb_array_elements_text(x.m->'spec'->'support'->'hardwareArchitectures')),
		       ARRAY(SELECT jsonb_array_elements_text(x.m->'spec'->'support'->'dtypes')),
		       x.m, x.src
		  FROM unnest(d, m, src) WITH ORDINALITY x(d, m, src, n)
		 LEFT JOIN LATERAL (SELECT true AS found FROM kbench_implementations have WHERE have.digest = x.d LIMIT 1) have ON true
		 WHERE have.found IS NULL
		 ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING digest)
	SELECT array_agg(ins.digest) INTO stored FROM ins;
	IF stored IS NOT NULL THEN
		UPDATE kbench_runs r SET unresolved = array_remove(r.unresolved, 'implementation')
		 WHERE cardinality(r.unresolved) > 0 AND r.implementation_digest = ANY (stored) AND 'implementation' = ANY (r.unresolved);
		RETURN QUERY SELECT unnest(stored);
	END IF;
END
$$;

CREATE OR REPLACE FUNCTION _kernelindex.store_protocols(d text[], m jsonb[], src text[]) RETURNS SETOF text
	LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
	stored text[];
BEGIN
	WITH ins AS (
		INSERT INTO kbench_protocols (digest, family, harness, timer, primary_statistic, warmup_ns, name, manifest, source)
		SELECT x.d, p.family, p.harness, p.timer, p.primary_statistic, p.warmup_ns, x.m->'metadata'->>'name', x.m, x.src
		  FROM (SELECT x.* FROM unnest(d, m, src) WITH ORDINALITY x(d, m, src, n)
		         LEFT JOIN LATERAL (SELECT true AS found FROM kbench_protocols have WHERE have.digest = x.d LIMIT 1) have ON true
		         WHERE have.found IS NULL) x
		 CROSS JOIN LATERAL kbench_protocol_of(x.d, x.m) p
		 ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING digest)
	SELECT array_agg(ins.digest) INTO stored FROM ins;
	IF stored IS NOT NULL THEN
		UPDATE kbench_runs r SET unresolved = array_remove(r.unresolved, 'protocol')
		 WHERE cardinality(r.unresolved) > 0 AND r.protocol_digest = ANY (stored) AND 'protocol' = ANY (r.unresolved);
		RETURN QUERY SELECT unnest(stored);
	END IF;
END
$$;

CREATE OR REPLACE FUNCTION _kernelindex.store_environments(d text[], m jsonb[], src text[]) RETURNS SETOF text
	LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
	stored text[];
BEGIN
	WITH ins AS (
		INSERT INTO kbench_environments (digest, vendor, product, architecture, form_factor, memory_bytes,
		                                 driver, cuda_toolkit, name, manifest, source)
		SELECT x.d, e.vendor, e.product, e.architecture, e.form_factor, e.memory_bytes, e.driver, e.cuda_toolkit,
		       x.m->'metadata'->>'name', x.m, x.src
		  FROM (SELECT x.* FROM unnest(d, m, src) WITH ORDINALITY x(d, m, src, n)
		         LEFT JOIN LATERAL (SELECT true AS found FROM kbench_environments have WHERE have.digest = x.d LIMIT 1) have ON true
		         WHERE have.found IS NULL) x
		 CROSS JOIN LATERAL kbench_environment_of(x.d, x.m) e
		 ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING digest)
	SELECT array_agg(ins.digest) INTO stored FROM ins;
	IF stored IS NOT NULL THEN
		UPDATE kbench_runs r SET unresolved = array_remove(r.unresolved, 'environment')
		 WHERE cardinality(r.unresolved) > 0 AND r.environment_digest = ANY (stored) AND 'environment' = ANY (r.unresolved);
		RETURN QUERY SELECT unnest(stored);
	END IF;
END
$$;

CREATE OR REPLACE FUNCTION _kernelindex.store_serving(d text[], m jsonb[], src text[], k text[]) RETURNS SETOF text
	LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
BEGIN
	RETURN QUERY
	WITH ins AS (
		INSERT INTO kbench_serving_manifests (digest, kind, name, manifest, source)
		SELECT x.d, x.k, x.m->'metadata'->>'name', x.m, x.src
		  FROM unnest(d, m, src, k) WITH ORDINALITY x(d, m, src, k, n)
		 LEFT JOIN LATERAL (SELECT true AS found FROM kbench_serving_manifests have WHERE have.digest = x.d LIMIT 1) have ON true
		 WHERE have.found IS NULL
		 ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING digest)
	SELECT digest FROM ins;
END
$$;

-- Which of these manifests, none of them a run, are stored already: g is
-- the kind's table as src/store.c numbers them (0 operations, 1 projects,
-- 2 workloads, 3 implementations, 4 protocols, 5 environments, 6 serving).
-- A job's operation, workload, implementation, protocol and environment are
-- there after its first job; one call tells it for all five, where a call
-- of each kind's function cost a trivial job 0.38 ms in the worker, almost
-- all of it the five calls (pg_stat_statements, 2026-12-07).  The store
-- calls it for a few manifests, not for an import's thousands.
CREATE OR REPLACE FUNCTION _kernelindex.stored_digests(d text[], g int[]) RETURNS SETOF text
	LANGUAGE plpgsql STABLE SET search_path = pg_catalog, @extschema@, pg_temp SET plan_cache_mode = force_generic_plan
	SET enable_seqscan = off SET jit = off AS $$
BEGIN
	RETURN QUERY
	SELECT x.d FROM unnest(d, g) x(d, g)
	 WHERE CASE x.g WHEN 0 THEN EXISTS (SELECT 1 FROM kbench_operations t WHERE t.digest = x.d)
	                WHEN 1 THEN EXISTS (SELECT 1 FROM kbench_projects t WHERE t.digest = x.d)
	                WHEN 2 THEN EXISTS (SELECT 1 FROM kbench_workloads t WHERE t.digest = x.d)
	                WHEN 3 THEN EXISTS (SELECT 1 FROM kbench_implementations t WHERE t.digest = x.d)
	                WHEN 4 THEN EXISTS (SELECT 1 FROM kbench_protocols t WHERE t.digest = x.d)
	                WHEN 5 THEN EXISTS (SELECT 1 FROM kbench_environments t WHERE t.digest = x.d)
	                WHEN 6 THEN EXISTS (SELECT 1 FROM kbench_serving_manifests t WHERE t.digest = x.d)
	                ELSE false END;
END
$$;

-- Runs, in arrival order (the record history follows it), with their
-- measurements; raw: the kept raw samples as int8[] text, or NULL.
CREATE OR REPLACE FUNCTION _kernelindex.store_runs(d text[], m jsonb[], src text[], raw text[]) RETURNS SETOF text
	LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off SET enable_memoize = off SET work_mem = '64MB' AS $$
BEGIN
	RETURN QUERY
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
		  FROM (SELECT x.* FROM unnest(d, m, src, raw) WITH ORDINALITY x(d, m, src, raw, n)
		         LEFT JOIN LATERAL (SELECT true AS found FROM kbench_runs have WHERE have.digest = x.d LIMIT 1) have ON true
		         WHERE have.found IS NULL) x
		 CROSS JOIN LATERAL _kernelindex.run_columns(x.d, x.m) r
		 ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING digest, manifest->'spec'->'measurements' AS measurements),
	meas AS (
		INSERT INTO kbench_measurements (run_digest, ordinal, metric, unit, statistic, value, sample_count)
		SELECT ins.digest, e.ord::int, e.v->>'metric', e.v->>'unit', e.v->>'statistic', (e.v->>'value')::float8,
		       (e.v->>'sampleCount')::bigint
		  FROM ins CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(ins.measurements) = 'array'
		                                                        THEN ins.measurements ELSE '[]' END) WITH ORDINALITY AS e(v, ord)
		ON CONFLICT DO NOTHING)
	SELECT digest FROM ins;
END
$$;

-- The export's rows that carry no manifest, and its own rows beside the
-- manifests, as they came (first one wins); how many were new.
CREATE OR REPLACE FUNCTION _kernelindex.store_catalog_rows(t text[], id text[], r jsonb[]) RETURNS bigint
	LANGUAGE sql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	WITH ins AS (
		INSERT INTO kbench_catalog_rows (table_name, row_id, row)
		SELECT x.t, x.id, x.r FROM unnest(t, id, r) WITH ORDINALITY x(t, id, r, n) ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING 1)
	SELECT count(*) FROM ins
$$;

CREATE OR REPLACE FUNCTION _kernelindex.store_source_rows(d text[], t text[], r jsonb[]) RETURNS bigint
	LANGUAGE sql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	WITH ins AS (
		INSERT INTO kbench_catalog_source_rows (digest, table_name, row)
		SELECT x.d, x.t, x.r FROM unnest(d, t, r) WITH ORDINALITY x(d, t, r, n) ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING 1)
	SELECT count(*) FROM ins
$$;

-- The lines an import rejected or skipped, with why.
CREATE OR REPLACE FUNCTION _kernelindex.store_rejections(import_id bigint, line bigint[], reason text[], skipped boolean[]) RETURNS bigint
	LANGUAGE sql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	WITH ins AS (
		INSERT INTO kbench_import_rejections (import_id, line, reason, skipped)
		SELECT import_id, x.l, x.r, x.s FROM unnest(line, reason, skipped) WITH ORDINALITY x(l, r, s, n) ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING 1)
	SELECT count(*) FROM ins
$$;

REVOKE EXECUTE ON FUNCTION _kernelindex.store_catalog_rows(text[], text[], jsonb[]), _kernelindex.store_source_rows(text[], text[], jsonb[]),
	_kernelindex.store_rejections(bigint, bigint[], text[], boolean[]) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION _kernelindex.run_columns(text, jsonb), _kernelindex.store_operations(text[], jsonb[], text[]), _kernelindex.store_projects(text[], jsonb[], text[]),
	_kernelindex.store_workloads(text[], jsonb[], text[], text[]), _kernelindex.store_implementations(text[], jsonb[], text[]),
	_kernelindex.store_protocols(text[], jsonb[], text[]), _kernelindex.store_environments(text[], jsonb[], text[]),
	_kernelindex.store_serving(text[], jsonb[], text[], text[]), _kernelindex.store_runs(text[], jsonb[], text[], text[]),
	_kernelindex.stored_digests(text[], int[])
	FROM PUBLIC;
