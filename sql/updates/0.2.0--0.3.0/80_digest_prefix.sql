-- Digest prefixes by index (issue 31): kbench__resolve_run reads a range of
-- this index instead of every run (sql/20_catalog.sql makes it on install).
CREATE INDEX kbench_runs_digest_prefix_idx ON kbench_runs (digest text_pattern_ops);
