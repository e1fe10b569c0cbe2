-- One resolver for what users name (issue 13): operations, implementations,
-- devices (environments), modes (protocols), runs and workloads.  Every
-- function, view-taking function and kbench_run resolves through these, so a
-- name means the same everywhere:
--   - case does not matter;
--   - an operation by its catalog name ('liger-layer-norm'), its short name
--     ('layer_norm', as kbench and Liger's scripts say) or its digest;
--   - a device by any of the words of its vendor, product, form factor or
--     name ('NVIDIA H100 80GB HBM3', 'h100', 'RTX 3090', '3090'), or 'cpu';
--   - anything with a digest by that digest or a unique prefix of 12 or more
--     hex digits, with or without 'sha256:';
--   - ambiguous input is an error that lists the candidates, unknown input an
--     error whose HINT lists the nearest names: never an empty result.
-- Every function here is CREATE OR REPLACE, replacing 0.1.0's resolvers.

-- A digest prefix as typed ('sha256:f7a72ed4c0b1...', 'f7a72ed4c0b1') as the
-- start of a stored digest ('sha256:f7a72ed4c0b1'), or NULL when it is not one
-- (fewer than 12 hex digits, other characters).
CREATE OR REPLACE FUNCTION _kernelindex.digest_prefix(s text) RETURNS text
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN CASE WHEN lower(btrim(s)) ~ '^(sha256:)?[0-9a-f]{12,64}(\.\.\.|…)?$'
	            THEN 'sha256:' || substring(lower(btrim(s)) FROM '^(?:sha256:)?([0-9a-f]{12,64})') END;

-- The words of a name, lower case: 'NVIDIA GeForce RTX 3090' -> {nvidia,geforce,rtx,3090}.
CREATE OR REPLACE FUNCTION _kernelindex.words(s text) RETURNS text[]
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN ARRAY(SELECT w FROM regexp_split_to_table(lower(s), '[^a-z0-9.]+') w WHERE w <> '');

-- Up to five of the candidates nearest to what was typed (most shared
-- three-letter runs first; those sharing none only when none shares any),
-- for a HINT.
CREATE OR REPLACE FUNCTION _kernelindex.near(typed text, candidates text[]) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN (SELECT string_agg(c, ', ' ORDER BY score DESC, c)
	          FROM (SELECT c, score FROM (
	                  SELECT c, score, max(score) OVER () AS best FROM (
	                    SELECT c, (SELECT count(DISTINCT g) FROM generate_series(1, greatest(length(t) - 2, 1)) i,
	                                      LATERAL substr(t, i, 3) g
	                                WHERE strpos(regexp_replace(lower(c), '[-_ ]+', '', 'g'), g) > 0) AS score
	                      FROM unnest(candidates) c, (SELECT lower(regexp_replace(typed, '[-_ ]+', '', 'g')) AS t) x) s0) s1
	                 WHERE score > 0 OR best = 0
	                 ORDER BY score DESC, c LIMIT 5) s);

-- The HINT for an unknown name (issue 29): the candidates that share at
-- least half of the typed name's three-letter runs, nearest first, as 'Did
-- you mean ...?', else that none is near and the names there are (up to 8)
-- or which query lists them (never names that merely share a few letters).
CREATE OR REPLACE FUNCTION _kernelindex.near_hint(typed text, candidates text[], listing text) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN (WITH t AS (SELECT lower(regexp_replace(coalesce(typed, ''), '[-_ ]+', '', 'g')) AS t),
	             g AS (SELECT DISTINCT substr(t, i, 3) AS g FROM t, generate_series(1, greatest(length(t) - 2, 1)) i),
	             s AS (SELECT c, (SELECT count(*) FROM g WHERE strpos(regexp_replace(lower(c), '[-_ ]+', '', 'g'), g.g) > 0) AS score
	                     FROM unnest(candidates) c),
	             near AS (SELECT c, score FROM s WHERE score > 0 AND score * 2 >= (SELECT count(*) FROM g)
	                       ORDER BY score DESC, c LIMIT 5)
	        SELECT CASE WHEN EXISTS (SELECT 1 FROM near)
	                    THEN format('Did you mean %s?  (%s lists them.)', (SELECT string_agg(c, ', ' ORDER BY score DESC, c) FROM near), listing)
	                    WHEN coalesce(cardinality(candidates), 0) = 0 THEN 'The catalog has none yet.'
	                    WHEN cardinality(candidates) <= 8
	                    THEN format('No name in the catalog is near it; the catalog has %s.', (SELECT string_agg(c, ', ' ORDER BY c) FROM unnest(candidates) c))
	                    ELSE format('No name in the catalog is near it; %s lists the %s there are.', listing, cardinality(candidates)) END);

-- The digests of an operation named by its name ('liger-layer-norm'), its
-- short name ('layer_norm'), its digest or a unique digest prefix.
CREATE OR REPLACE FUNCTION _kernelindex.resolve_operation(operation text) RETURNS text[]
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
DECLARE
	found text[];
	names text[];
	p text := _kernelindex.digest_prefix(operation);
BEGIN
	IF operation IS NULL OR btrim(operation) = '' THEN
		RAISE EXCEPTION 'an operation is required' USING ERRCODE = 'null_value_not_allowed',
			HINT = 'Name one, e.g. ''layer_norm'' or ''liger-layer-norm''.';
	END IF;
	-- by digest (a primary-key probe), name, or digest prefix (a range of
	-- kbench_operations_digest_prefix_idx): one arm each, so that each digest
	-- arm is an index scan (an OR of them is a filter over every row)
	SELECT array_agg(digest ORDER BY digest), array_agg(DISTINCT name) INTO found, names
	  FROM (SELECT digest, name FROM kbench_operations WHERE digest = operation
	        UNION SELECT digest, name FROM kbench_operations WHERE lower(name) = lower(btrim(operation))
	        UNION SELECT digest, name FROM kbench_operations
	               WHERE p IS NOT NULL AND digest ~>=~ p AND digest ~<~ (p || 'g') AND starts_with(digest, p)) o;
	IF found IS NULL THEN
		SELECT array_agg(digest ORDER BY digest), array_agg(DISTINCT name) INTO found, names FROM kbench_operations
		 WHERE _kernelindex.op_key(name) = _kernelindex.op_key(operation);
	END IF;
	IF found IS NULL THEN
		RAISE EXCEPTION 'unknown operation "%"', operation USING ERRCODE = 'undefined_object',
			DETAIL = 'No operation in the catalog has that name, short name or digest.',
			HINT = _kernelindex.near_hint(operation, ARRAY(SELECT DISTINCT _kernelindex.op_key(name) FROM kbench_operations),
			                         'SELECT DISTINCT name FROM kbench_operations');
	END IF;
	IF cardinality(names) > 1 THEN
		RAISE EXCEPTION 'operation "%" is ambiguous', operation USING ERRCODE = 'ambiguous_parameter',
			DETAIL = format('It matches %s.', array_to_string(names, ', ')),
			HINT = 'Name the operation in full or give more of its digest.';
	END IF;
	RETURN found;
END $$;

-- What makes two implementation revisions the same code (issue 29): the
-- operation, the language, the entry's symbol and the content digest of the
-- file that holds it.  The name, the path it was reached by and the title
-- are not part of it, so a library run through the CLI (named
-- byo-<file>-<symbol>) and the same library registered in SQL under a name
-- are one implementation.  NULL where the manifest has no content digest
-- (Liger's imported rows): such a revision is only itself.
CREATE OR REPLACE FUNCTION _kernelindex.code_key(manifest jsonb) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN CASE WHEN manifest->'spec'->'source'->>'contentDigest' IS NOT NULL
	             AND manifest->'spec'->'callable'->>'symbol' IS NOT NULL
	            THEN concat_ws(' ', manifest->'spec'->'operation'->>'specDigest',
	                           manifest->'spec'->'callable'->>'language',
	                           manifest->'spec'->'callable'->>'symbol',
	                           manifest->'spec'->'source'->>'contentDigest') END;

-- The digests of an implementation of one of the operations: by digest or a
-- unique prefix, by name, by provider ('huggingface' for both Liger's
-- imported liger-bench-layer-norm-huggingface and the runs measured here by
-- kbench's built-in kbench-python-huggingface-layer-norm; 'torch_compile'
-- for liger-bench-embedding-torch-compile and kbench-python-torch_compile-
-- embedding, never torch's: a run here by the provider its callable names,
-- huggingface.layer_norm, torch_compile.embedding, not by a name prefix) or by the
-- provider's title after ' · ' ('Transformers'), in any case; and with each
-- of them every revision of the same code (_kernelindex.code_key: the same
-- entry and content digest under another name).  role names the argument in
-- errors.  All digests returned are one implementation (one name, its
-- other names for the same code, or one provider), but for a provider with
-- no operation named (op_digests NULL): then the provider of every
-- operation ('liger' everywhere).
CREATE OR REPLACE FUNCTION _kernelindex.resolve_implementation(op_digests text[], implementation text, role text DEFAULT NULL)
	RETURNS text[] LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
DECLARE
	found text[];
	names text[];
	p text := _kernelindex.digest_prefix(implementation);
BEGIN
	IF implementation IS NULL OR btrim(implementation) = '' THEN
		RAISE EXCEPTION 'a %implementation is required', coalesce(role || ' ', '') USING ERRCODE = 'null_value_not_allowed';
	END IF;
	-- digest, name or digest prefix, one arm each (see resolve_operation)
	SELECT array_agg(digest ORDER BY digest), array_agg(DISTINCT name) INTO found, names
	  FROM (SELECT digest, name, operation_digest FROM kbench_implementations WHERE digest = implementation
	        UNION SELECT digest, name, operation_digest FROM kbench_implementations WHERE lower(name) = lower(btrim(implementation))
	        UNION SELECT digest, name, operation_digest FROM kbench_implementations
	               WHERE p IS NOT NULL AND digest ~>=~ p AND digest ~<~ (p || 'g') AND starts_with(digest, p)) i
	 WHERE op_digests IS NULL OR operation_digest = ANY (op_digests);
	IF found IS NULL THEN
		-- a provider ('liger', 'Transformers'): of the operations named, or of
		-- every operation (one implementation each: 'liger' across operations)
		-- imported (liger-bench-<op>-<provider>) and measured here
		-- (kbench-python-<provider>-<op>): one provider, one implementation
		SELECT array_agg(digest ORDER BY digest), array_agg(DISTINCT name)
		  INTO found, names
		  FROM kbench_implementations
		 WHERE (op_digests IS NULL OR operation_digest = ANY (op_digests))
		   AND (name LIKE 'liger-bench-%-' || _kernelindex.slug(implementation)
		        OR (name LIKE 'kbench-python-%' AND _kernelindex.slug(split_part(manifest->'spec'->'callable'->>'symbol', '.', 1)) = _kernelindex.slug(implementation))
		        OR lower(split_part(manifest->'metadata'->>'title', ' · ', 2)) = lower(btrim(implementation)));
		IF found IS NOT NULL THEN
			RETURN _kernelindex.same_code(found);
		END IF;
	END IF;
	IF found IS NULL AND op_digests IS NULL AND p IS NOT NULL THEN
		-- runs naming an implementation not (yet) in the catalog: the distinct
		-- implementation digests in the prefix's range of
		-- kbench_runs_implementation_digest_idx (text_pattern_ops), one index
		-- probe each (a skip scan), never every run of them
		WITH RECURSIVE d(digest) AS (
			(SELECT r.implementation_digest FROM kbench_runs r
			  WHERE r.implementation_digest ~>=~ p AND r.implementation_digest ~<~ (p || 'g')
			  ORDER BY r.implementation_digest USING ~<~ LIMIT 1)
			UNION ALL
			SELECT (SELECT r.implementation_digest FROM kbench_runs r
			         WHERE r.implementation_digest ~>~ d.digest AND r.implementation_digest ~<~ (p || 'g')
			         ORDER BY r.implementation_digest USING ~<~ LIMIT 1)
			  FROM d WHERE d.digest IS NOT NULL)
		SELECT array_agg(digest ORDER BY digest), array_agg(digest ORDER BY digest) INTO found, names
		  FROM d WHERE starts_with(digest, p);
	END IF;
	IF found IS NULL THEN
		RAISE EXCEPTION 'unknown %implementation "%"', coalesce(role || ' ', ''), implementation USING ERRCODE = 'undefined_object',
			DETAIL = CASE WHEN op_digests IS NULL THEN 'No implementation in the catalog has that name or digest.'
			              ELSE 'No implementation of the operation has that name, provider or digest.' END,
			HINT = _kernelindex.near_hint(implementation,
			                         ARRAY(SELECT DISTINCT name FROM kbench_implementations
			                                WHERE op_digests IS NULL OR operation_digest = ANY (op_digests)),
			                         'SELECT DISTINCT name FROM kbench_implementations');
	END IF;
	IF cardinality(names) > 1 THEN
		RAISE EXCEPTION '%implementation "%" is ambiguous', coalesce(role || ' ', ''), implementation USING ERRCODE = 'ambiguous_parameter',
			DETAIL = format('It matches %s.', array_to_string(names, ', ')),
			HINT = 'Name the implementation in full.';
	END IF;
	RETURN _kernelindex.same_code(found);
END $$;

-- The digests given and every implementation revision of the same code
-- (_kernelindex.code_key), in digest order; digests not in the catalog
-- (implementations known only from runs) after them.  Read by index: the
-- digests given by primary key, their kin by operation (the code key
-- includes the operation), never the whole catalog (007_digest_plans.pl).
CREATE OR REPLACE FUNCTION _kernelindex.same_code(digests text[]) RETURNS text[]
	LANGUAGE sql STABLE SET search_path = @extschema@, pg_temp
	RETURN (WITH given AS (SELECT i.digest, i.operation_digest, _kernelindex.code_key(i.manifest) AS key
	                         FROM kbench_implementations i WHERE i.digest = ANY (digests))
	        SELECT array_agg(d ORDER BY d)
	          FROM (SELECT digest FROM given
	                UNION
	                SELECT j.digest FROM given g JOIN kbench_implementations j ON j.operation_digest = g.operation_digest
	                 WHERE g.key IS NOT NULL AND _kernelindex.code_key(j.manifest) = g.key) x(d))
	       || ARRAY(SELECT d FROM unnest(digests) d WHERE NOT EXISTS (SELECT 1 FROM kbench_implementations i WHERE i.digest = d));

-- The protocol digests of a timed pass ('forward', 'backward', 'full', any
-- case) or of a protocol named by name, digest or digest prefix; NULL for any.
CREATE OR REPLACE FUNCTION _kernelindex.resolve_protocols(mode text) RETURNS text[]
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
DECLARE
	found text[];
	m text := lower(btrim(mode));
	p text := _kernelindex.digest_prefix(mode);
BEGIN
	IF mode IS NULL THEN
		RETURN NULL;
	END IF;
	IF m IN ('forward', 'backward', 'full') THEN
		SELECT array_agg(digest ORDER BY digest) INTO found FROM kbench_protocols WHERE kbench_protocol_mode(name) = m;
	ELSE
		-- name, digest or digest prefix, one arm each (see resolve_operation)
		SELECT array_agg(digest ORDER BY digest) INTO found
		  FROM (SELECT digest FROM kbench_protocols WHERE lower(name) = m
		        UNION SELECT digest FROM kbench_protocols WHERE digest = mode
		        UNION SELECT digest FROM kbench_protocols
		               WHERE p IS NOT NULL AND digest ~>=~ p AND digest ~<~ (p || 'g') AND starts_with(digest, p)) x;
	END IF;
	IF found IS NULL THEN
		RAISE EXCEPTION 'unknown mode "%"', mode USING ERRCODE = 'undefined_object',
			DETAIL = 'A mode is forward, backward or full, or the name or digest of a protocol in the catalog.',
			HINT = format('Did you mean %s?', _kernelindex.near(mode, ARRAY['forward', 'backward', 'full']));
	END IF;
	RETURN found;
END $$;

-- Whether an environment is a CPU one (what device => 'cpu' runs on).
CREATE OR REPLACE FUNCTION _kernelindex.is_cpu(e kbench_environments) RETURNS boolean
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN e.name LIKE 'kbench-cpu-%' OR e.architecture IN ('x86_64', 'aarch64', 'arm64', 'ppc64le', 's390x', 'riscv64');

-- The short name of a device, as the resolver takes it: 'cpu' for a CPU
-- environment, else its product without the vendor and brand words
-- ('NVIDIA H100' -> 'h100', 'NVIDIA GeForce RTX 3090' -> 'rtx 3090').  The
-- views' device_key column.
CREATE OR REPLACE FUNCTION _kernelindex.device_key(e kbench_environments) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN CASE WHEN _kernelindex.is_cpu(e) THEN 'cpu'
	            ELSE regexp_replace(lower(e.product), '^(nvidia|amd|intel|apple) +((geforce|instinct|radeon|tesla) +)?', '') END;

-- The environment digests of a device: a digest or a unique prefix, 'cpu',
-- or words of its vendor, product, form factor or name ('NVIDIA H100 80GB
-- HBM3', 'h100', 'RTX 3090', '3090') or of its kbench_devices row's name
-- ('H100 SXM5'); NULL for any.  Words that fit more than
-- one product are ambiguous.
CREATE OR REPLACE FUNCTION _kernelindex.resolve_environments(environment text) RETURNS text[]
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
DECLARE
	found text[];
	products text[];
	p text := _kernelindex.digest_prefix(environment);
	w text[] := _kernelindex.words(environment);
BEGIN
	IF environment IS NULL THEN
		RETURN NULL;
	END IF;
	IF cardinality(w) = 0 THEN
		RAISE EXCEPTION 'an environment is required' USING ERRCODE = 'invalid_parameter_value',
			HINT = 'Name a device, e.g. ''H100'', ''RTX 3090'' or ''cpu'', or leave it NULL for every device.';
	END IF;
	-- digest or digest prefix, one arm each (see resolve_operation)
	SELECT array_agg(digest ORDER BY digest), array_agg(DISTINCT product) INTO found, products
	  FROM (SELECT digest, product FROM kbench_environments WHERE digest = environment
	        UNION SELECT digest, product FROM kbench_environments
	               WHERE p IS NOT NULL AND digest ~>=~ p AND digest ~<~ (p || 'g') AND starts_with(digest, p)) e;
	IF found IS NULL AND w = ARRAY['cpu'] THEN
		SELECT array_agg(digest ORDER BY digest), ARRAY['cpu'] INTO found FROM kbench_environments e WHERE _kernelindex.is_cpu(e);
		IF found IS NULL THEN
			RAISE EXCEPTION 'no CPU run is in the catalog' USING ERRCODE = 'undefined_object',
				HINT = 'Queue one with kbench_run(..., device => ''cpu'').';
		END IF;
	END IF;
	IF found IS NULL THEN
		SELECT array_agg(digest ORDER BY digest), array_agg(DISTINCT product) INTO found, products FROM kbench_environments e
		 WHERE w <@ (_kernelindex.words(coalesce(vendor, '') || ' ' || coalesce(product, '') || ' ' || coalesce(form_factor, ''))
		             || _kernelindex.words(coalesce(name, ''))
		             -- and its datasheet row's name (kbench_devices: 'H100 SXM5 80GB', the
		             -- docs' spelling, for the form factor '80GB HBM3')
		             || _kernelindex.words(coalesce((kbench_device_of(e.digest)).name, '')));
	END IF;
	IF found IS NULL THEN
		RAISE EXCEPTION 'unknown environment "%"', environment USING ERRCODE = 'undefined_object',
			DETAIL = 'No environment in the catalog has that digest, or those words in its vendor, product, form factor or name.',
			HINT = _kernelindex.near_hint(environment, ARRAY(SELECT DISTINCT product FROM kbench_environments WHERE product IS NOT NULL),
			                         'SELECT DISTINCT product, form_factor FROM kbench_environments');
	END IF;
	IF cardinality(products) > 1 THEN
		RAISE EXCEPTION 'environment "%" is ambiguous', environment USING ERRCODE = 'ambiguous_parameter',
			DETAIL = format('It matches %s.', array_to_string(products, ', ')),
			HINT = 'Name more of the device: its product (and form factor), or give more of its digest.';
	END IF;
	RETURN found;
END $$;

-- A run by its digest or a unique digest prefix of 12 or more hex digits.
CREATE OR REPLACE FUNCTION _kernelindex.resolve_run(run text, role text DEFAULT NULL) RETURNS text
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
DECLARE
	found text[];
	p text := _kernelindex.digest_prefix(run);
BEGIN
	IF run IS NULL OR btrim(run) = '' THEN
		RAISE EXCEPTION 'a %run is required', coalesce(role || ' ', '') USING ERRCODE = 'null_value_not_allowed',
			HINT = 'Name a run by its digest or 12 or more hex digits of it.';
	END IF;
	IF p IS NULL THEN
		RAISE EXCEPTION '%run "%" is not a digest', coalesce(role || ' ', ''), run USING ERRCODE = 'invalid_parameter_value',
			HINT = 'Name a run by its digest (sha256: and 64 hex digits) or 12 or more hex digits of it.';
	END IF;
	-- A whole digest is one primary-key probe; a prefix is a range of the
	-- pattern index (kbench_runs_digest_prefix_idx: byte order whatever the
	-- database's collation; the hex digits after a prefix sort below 'g').
	-- Never starts_with(), which no btree serves: it reads every run.
	IF length(p) = 71 THEN
		SELECT array_agg(digest) INTO found FROM kbench_runs WHERE digest = p;
	ELSE
		SELECT array_agg(digest ORDER BY digest) INTO found
		  FROM (SELECT digest FROM kbench_runs WHERE digest ~>=~ p AND digest ~<~ (p || 'g')
		         ORDER BY digest LIMIT 6) r;
	END IF;
	IF found IS NULL THEN
		RAISE EXCEPTION 'no %run % in the catalog', coalesce(role || ' ', ''), run USING ERRCODE = 'no_data_found',
			HINT = 'kbench_runs lists the runs; ingest a run before naming it.';
	END IF;
	IF cardinality(found) > 1 THEN
		RAISE EXCEPTION '%run "%" is ambiguous', coalesce(role || ' ', ''), run USING ERRCODE = 'ambiguous_parameter',
			DETAIL = format('It is the start of %s%s.', array_to_string(found[1:5], ', '), CASE WHEN cardinality(found) > 5 THEN ', …' ELSE '' END),
			HINT = 'Give more of the digest.';
	END IF;
	RETURN found[1];
END $$;

-- A workload by its digest, a unique digest prefix or its name.
CREATE OR REPLACE FUNCTION _kernelindex.resolve_workload(workload text) RETURNS text
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
DECLARE
	found text[];
	p text := _kernelindex.digest_prefix(workload);
BEGIN
	IF workload IS NULL OR btrim(workload) = '' THEN
		RAISE EXCEPTION 'a workload is required' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	-- by digest (a primary-key probe) first, then by name or digest prefix
	SELECT array_agg(digest) INTO found FROM kbench_workloads WHERE digest = coalesce(p, workload);
	IF found IS NULL THEN
		-- name or digest prefix, one arm each (see resolve_operation)
		SELECT array_agg(digest ORDER BY digest) INTO found
		  FROM (SELECT digest FROM (SELECT digest FROM kbench_workloads WHERE lower(name) = lower(btrim(workload))
		                            UNION SELECT digest FROM kbench_workloads
		                                   WHERE p IS NOT NULL AND digest ~>=~ p AND digest ~<~ (p || 'g') AND starts_with(digest, p)) u
		         ORDER BY digest LIMIT 6) w;
	END IF;
	IF found IS NULL THEN
		RAISE EXCEPTION 'unknown workload "%"', workload USING ERRCODE = 'undefined_object',
			DETAIL = 'No workload in the catalog has that digest or name.',
			HINT = 'kbench_workloads lists them (name, axes, dtypes).';
	END IF;
	IF cardinality(found) > 1 THEN
		RAISE EXCEPTION 'workload "%" is ambiguous', workload USING ERRCODE = 'ambiguous_parameter',
			DETAIL = format('It matches %s.', array_to_string(found[1:5], ', ')),
			HINT = 'Give more of the digest.';
	END IF;
	RETURN found[1];
END $$;

-- Where an implementation's runs are: 'cpu (forward), NVIDIA H100 80GB HBM3
-- (backward, forward, full)', or 'no runs'.
CREATE OR REPLACE FUNCTION _kernelindex.runs_where(impls text[]) RETURNS text
	LANGUAGE sql STABLE SET search_path = @extschema@, pg_temp
	RETURN coalesce((SELECT string_agg(format('%s (%s)', dev, passes), ', ' ORDER BY dev)
	                   FROM (SELECT CASE WHEN _kernelindex.is_cpu(e) THEN 'cpu' ELSE concat_ws(' ', e.product, e.form_factor) END AS dev,
	                                string_agg(DISTINCT coalesce(kbench_protocol_mode(p.name), p.name), ', ') AS passes
	                           FROM kbench_runs r
	                           JOIN kbench_environments e ON e.digest = r.environment_digest
	                           JOIN kbench_protocols p ON p.digest = r.protocol_digest
	                          WHERE r.implementation_digest = ANY (impls)
	                          GROUP BY 1) d), 'no runs');

-- The NOTICE of an analytics function whose names resolved but whose answer
-- is empty (issue 29: never silently empty): what each name resolved to
-- (every implementation, imported or measured here) and where their runs
-- are.  sides: [{"role": "baseline", "typed": "huggingface", "digests":
-- [...]}, ...]; selection: what else narrowed it ('forward on cpu'), or
-- NULL.
CREATE OR REPLACE FUNCTION _kernelindex.say_empty(fn text, why text, sides jsonb, selection text) RETURNS void
	LANGUAGE plpgsql STABLE SET search_path = @extschema@, pg_temp AS $$
DECLARE
	detail text;
BEGIN
	SELECT string_agg(format('%s "%s" is %s, with runs on %s.',
	                         coalesce(s->>'role', 'implementation'), s->>'typed',
	                         coalesce((SELECT string_agg(DISTINCT i.name, ', ') FROM kbench_implementations i
	                                    WHERE i.digest IN (SELECT jsonb_array_elements_text(s->'digests'))),
	                                  (SELECT string_agg(d, ', ') FROM jsonb_array_elements_text(s->'digests') d)),
	                         _kernelindex.runs_where(ARRAY(SELECT jsonb_array_elements_text(s->'digests')))), ' ')
	  INTO detail FROM jsonb_array_elements(sides) s;
	RAISE NOTICE '%: %', fn, why
		USING DETAIL = rtrim(coalesce('Selected: ' || selection || '.  ', '') || coalesce(detail, '')),
		      HINT = 'Name a pass and device where the runs are, or queue the missing runs there with kbench_run(...).';
END $$;
