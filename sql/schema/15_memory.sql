-- Memory observations: peak device memory measured beside a timing, kept
-- where a BenchmarkRun cannot hold it (a run must carry a latency).
--
-- Today they come from Liger-Kernel's CSV (metric_name = memory: the
-- quantiles of torch.cuda.max_memory_allocated() after the timed pass, in
-- MiB; docs/LIGER.md, "Memory rows") and name the same operation, workload,
-- implementation, protocol and environment digests as the speed rows of the
-- same kernel, provider, pass, sizes and GPU.  Runs kernelindex makes carry
-- their peak memory as a run measurement (peak_memory, bytes) instead; the
-- memory analytics read both (sql/code/45_memory_analytics.sql).
--
-- Append-only like the rest of the catalog: rows are added by the Liger
-- import and the catalog import (src/memory.c), never changed or deleted,
-- and they travel in kbench_export_catalog() as "memory_observations" rows.

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
	-- digests: 'sha256:' and 64 hex digits, said as [0-9a-f]+ and a length of 71
	-- (the bounded repetition [0-9a-f]{64} costs PostgreSQL's regex engine ~15 us a value)
	CHECK (operation_digest ~ '^sha256:[0-9a-f]+$' AND length(operation_digest) = 71
	       AND workload_digest ~ '^sha256:[0-9a-f]+$' AND length(workload_digest) = 71
	       AND implementation_digest ~ '^sha256:[0-9a-f]+$' AND length(implementation_digest) = 71
	       AND protocol_digest ~ '^sha256:[0-9a-f]+$' AND length(protocol_digest) = 71
	       AND environment_digest ~ '^sha256:[0-9a-f]+$' AND length(environment_digest) = 71),
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

SELECT pg_catalog.pg_extension_config_dump('kbench_memory_observations', '');
