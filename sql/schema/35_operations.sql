-- Operations a user defined as data (docs/OPERATIONS.md, "Registering an
-- operation"; src/operations.c): kbench_register_operation (kbench_admin)
-- keeps here what it read from kernelindex.implementation_directory, the
-- definition's text and its float64 reference's source with the sha256 of
-- each, so that every process runs what was registered (never the files
-- again).  The kernels registry of each backend, worker and agent follows
-- this table as its current snapshot sees it.

CREATE TABLE kbench_registered_operations (
	name text PRIMARY KEY,               -- the definition's "name"
	definition text NOT NULL,            -- the definition file's text (kernels/ops/defs' format)
	definition_digest text NOT NULL,     -- sha256:<hex> of it
	reference_source text,               -- reference.file's text; NULL: a function of kbench_reference.py
	reference_file text,                 -- where it was read
	reference_digest text,               -- sha256:<hex> of it
	source_file text NOT NULL,           -- the definition's file, resolved
	registered_by name NOT NULL,
	registered_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	CHECK ((reference_source IS NULL) = (reference_digest IS NULL) AND (reference_source IS NULL) = (reference_file IS NULL))
);
SELECT pg_catalog.pg_extension_config_dump('kbench_registered_operations', '');
