-- Staged lines are marked with the role that staged them, and each caller of
-- kbench_import_catalog_staged imports only its own (two admins staging at
-- once no longer import each other's lines).  Lines staged under 0.1.0 and
-- never imported are dropped: the table is unlogged scratch space.
TRUNCATE kbench_import_staging;
ALTER TABLE kbench_import_staging ADD COLUMN staged_by name NOT NULL DEFAULT CURRENT_USER;
