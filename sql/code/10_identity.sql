-- Identity: canonical JSON, digests, normalization, validation (IDENTITY.md, src/identity.c).

--------------------------------------------------------------------------
-- Identity: canonical JSON, digests, normalization, validation (IDENTITY.md)
--------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION kbench_canonical(json) RETURNS text
	AS 'MODULE_PATHNAME', 'kbench_canonical' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION kbench_canonical(jsonb) RETURNS text
	AS 'MODULE_PATHNAME', 'kbench_canonical' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION kbench_canonical(text) RETURNS text
	AS 'MODULE_PATHNAME', 'kbench_canonical' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION kbench_canonical(json) IS 'RFC 8785 canonical text of a JSON value; duplicate member names are rejected';

CREATE OR REPLACE FUNCTION kbench_digest(json) RETURNS text
	AS 'MODULE_PATHNAME', 'kbench_digest' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION kbench_digest(jsonb) RETURNS text
	AS 'MODULE_PATHNAME', 'kbench_digest' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION kbench_digest(text) RETURNS text
	AS 'MODULE_PATHNAME', 'kbench_digest' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION kbench_digest(json) IS 'sha256 digest of a kernelindex.dev/v1alpha1 manifest''s identity body, after strict validation and normalization';

CREATE OR REPLACE FUNCTION kbench_normalize(json) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'kbench_normalize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION kbench_normalize(jsonb) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'kbench_normalize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION kbench_normalize(text) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'kbench_normalize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION kbench_normalize(json) IS 'the validated, normalized manifest (set-like lists sorted, durations in ns)';

CREATE OR REPLACE FUNCTION kbench_validate(json, OUT path text, OUT rule text, OUT message text) RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'kbench_validate' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION kbench_validate(jsonb, OUT path text, OUT rule text, OUT message text) RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'kbench_validate' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION kbench_validate(text, OUT path text, OUT rule text, OUT message text) RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'kbench_validate' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION kbench_validate(json) IS 'every problem of a manifest as (path, rule, message) rows; no rows when valid';

CREATE OR REPLACE FUNCTION kbench_validate_run(json, OUT path text, OUT rule text, OUT message text) RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'kbench_validate_run' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION kbench_validate_run(jsonb, OUT path text, OUT rule text, OUT message text) RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'kbench_validate_run' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION kbench_validate_run(text, OUT path text, OUT rule text, OUT message text) RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'kbench_validate_run' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION kbench_validate_run(json) IS 'every problem of a {run, protocol, environment} document as rows, including digests the run names wrongly';

CREATE OR REPLACE FUNCTION kbench_run_digests(json, OUT run_digest text, OUT protocol_digest text, OUT environment_digest text) RETURNS record
	AS 'MODULE_PATHNAME', 'kbench_run_digests' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION kbench_run_digests(jsonb, OUT run_digest text, OUT protocol_digest text, OUT environment_digest text) RETURNS record
	AS 'MODULE_PATHNAME', 'kbench_run_digests' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION kbench_run_digests(text, OUT run_digest text, OUT protocol_digest text, OUT environment_digest text) RETURNS record
	AS 'MODULE_PATHNAME', 'kbench_run_digests' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION kbench_run_digests(json) IS 'run, protocol and environment digests of a consistent {run, protocol, environment} document';
