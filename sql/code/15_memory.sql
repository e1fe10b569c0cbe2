-- Memory observations (docs/LIGER.md): their guard and their readers; the
-- table is sql/schema/15_memory.sql.

-- Refuse UPDATE, DELETE and TRUNCATE: observations are never changed or removed.
CREATE OR REPLACE FUNCTION _kernelindex.memory_append_only() RETURNS trigger
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	RAISE EXCEPTION 'cannot % kbench_memory_observations: memory observations are append-only', lower(TG_OP)
		USING ERRCODE = 'restrict_violation',
		      DETAIL = 'A memory observation records a measurement; it is never changed or removed.',
		      HINT = 'Import the corrected measurement under an external id of its own.';
END $$;
REVOKE EXECUTE ON FUNCTION _kernelindex.memory_append_only() FROM PUBLIC;

CREATE OR REPLACE TRIGGER append_only BEFORE UPDATE OR DELETE ON kbench_memory_observations
	FOR EACH ROW EXECUTE FUNCTION _kernelindex.memory_append_only();
CREATE OR REPLACE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_memory_observations
	FOR EACH STATEMENT EXECUTE FUNCTION _kernelindex.memory_append_only();

-- The Liger import's memory observations (their manifests already stored),
-- as arrays, stored in the order given by one INSERT; how many were new.
-- Internal: src/memory.c calls it.
CREATE OR REPLACE FUNCTION _kernelindex.store_memory_observations(external_ids text[], operations text[], workloads text[],
	implementations text[], protocols text[], environments text[], passes text[], p50s bigint[], p20s bigint[],
	p80s bigint[], versions text[], observed text[], lines bigint[]) RETURNS bigint
	LANGUAGE sql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	WITH ins AS (
		INSERT INTO kbench_memory_observations (source, external_id, operation_digest, workload_digest,
		                                        implementation_digest, protocol_digest, environment_digest, pass,
		                                        p50_bytes, p20_bytes, p80_bytes, liger_version, observed_at, source_line)
		SELECT 'liger-kernel-bench', x.e, x.o, x.w, x.i, x.p, x.env, x.pass, x.p50, x.p20, x.p80, x.v,
		       x.at::timestamptz, x.line
		  FROM unnest(external_ids, operations, workloads, implementations, protocols, environments, passes,
		              p50s, p20s, p80s, versions, observed, lines)
		       WITH ORDINALITY x(e, o, w, i, p, env, pass, p50, p20, p80, v, at, line, n)
		 ORDER BY x.n
		ON CONFLICT DO NOTHING RETURNING 1)
	SELECT count(*) FROM ins
$$;
REVOKE EXECUTE ON FUNCTION _kernelindex.store_memory_observations(text[], text[], text[], text[], text[], text[], text[],
	bigint[], bigint[], bigint[], text[], text[], bigint[]) FROM PUBLIC;

-- One memory_observations row of a catalog export (its manifests already
-- stored by the caller): 'inserted', 'present', or why it is rejected.
-- Internal: src/memory.c calls it.
CREATE OR REPLACE FUNCTION _kernelindex.memory_import(r jsonb, OUT outcome text)
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
REVOKE EXECUTE ON FUNCTION _kernelindex.memory_import(jsonb) FROM PUBLIC;

-- A memory observation as a row of the catalog export, carrying its
-- protocol's and environment's manifests (the export has no table of its
-- own for them; the other three travel in theirs).
CREATE OR REPLACE FUNCTION _kernelindex.memory_export_row(m kbench_memory_observations, protocol jsonb, environment jsonb)
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

GRANT SELECT ON kbench_memory_observations TO PUBLIC;
