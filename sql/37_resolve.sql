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
