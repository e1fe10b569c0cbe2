-- Implementations other than kbench's own (src/implementations.c,
-- kernels/impl*.c, docs/BYO.md).  kbench_run(..., implementation => ...)
-- takes 'huggingface', 'torch' or 'liger' (built-in python implementations,
-- run by the python harness with kernelindex.python) or a name registered
-- here by kbench_admin, for code under kernelindex.implementation_directory;
-- the worker runs it in a child process, under kbench's protocol.

CREATE TABLE kbench_registered_implementations (
	name text NOT NULL,
	operation text NOT NULL,
	entry text NOT NULL,                 -- python:/dir/file.py:function or library:/dir/libx.so:symbol
	language text NOT NULL,              -- python or c
	version text,                        -- as given at registration (projectRevision.version)
	implementation_digest text NOT NULL, -- kbench_implementations.digest of the file as registered
	registered_by name NOT NULL,
	registered_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	PRIMARY KEY (name, operation)
);
REVOKE ALL ON kbench_registered_implementations FROM PUBLIC;
GRANT SELECT ON kbench_registered_implementations TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('kbench_registered_implementations', '');

-- Register code to run: stores its ImplementationRevision (entry, language,
-- version, the sha256 of the file: a changed file is a new revision) and
-- returns its digest.  Runs as the extension's owner; for kbench_admin only.
--   SELECT kbench_register_implementation('my-ln', 'layer_norm', 'python:/srv/kbench/ln.py:layer_norm', '1.0');
CREATE FUNCTION kbench_register_implementation(name text, operation text, entry text, version text DEFAULT NULL)
	RETURNS text AS 'MODULE_PATHNAME', 'kbench_register_implementation'
	LANGUAGE C VOLATILE SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp;
REVOKE ALL ON FUNCTION kbench_register_implementation(text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_register_implementation(text, text, text, text) TO kbench_admin;
