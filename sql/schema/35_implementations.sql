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
SELECT pg_catalog.pg_extension_config_dump('kbench_registered_implementations', '');
