-- 0.2.0: what each import did with memory observations (sql/15_memory.sql,
-- fragment 50_memory.sql), counted in kbench_imports (sql/20_catalog.sql).
ALTER TABLE kbench_imports
	ADD COLUMN memory_inserted bigint NOT NULL DEFAULT 0,
	ADD COLUMN memory_present bigint NOT NULL DEFAULT 0,
	ADD COLUMN memory_rejected bigint NOT NULL DEFAULT 0;

