-- Issue 24: an import's rejections are read only by the role that ran it,
-- kbench_admin and pg_read_all_data.  Imports before 0.3.0 name no role
-- (NULL): their rejections are kbench_admin's.  The trigger that marks new
-- ones and the row-level policy: 51_import_rejections.sql.
ALTER TABLE kbench_imports ADD COLUMN imported_by name;
ALTER TABLE kbench_import_rejections ADD COLUMN imported_by name;
