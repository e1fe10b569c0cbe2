--------------------------------------------------------------------------
-- Import rejections are marked with the role that ran the import, which
-- (with kbench_admin and pg_read_all_data) alone reads them, by the policy
-- below; the table is in sql/schema/20_catalog.sql.  A trigger, so
-- that every writer of kbench_import_rejections (_kernelindex.store_rejections,
-- a 0.1.0 database's row-at-a-time INSERT) marks them.  The row-level
-- security, the policy and the trigger are code: re-run by every update.
--------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION _kernelindex.import_rejection_role() RETURNS trigger
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	-- a row given its role keeps it (pg_restore loads this table before kbench_imports)
	NEW.imported_by := coalesce(NEW.imported_by,
	                            (SELECT i.imported_by FROM @extschema@.kbench_imports i WHERE i.id = NEW.import_id));
	RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER imported_by BEFORE INSERT ON kbench_import_rejections
	FOR EACH ROW EXECUTE FUNCTION _kernelindex.import_rejection_role();

-- Who reads them (issue 24): a reason quotes up to 200 characters of its
-- line, which may come from a server file the importer could read and
-- others cannot.  The role that ran the import, kbench_admin (who runs the
-- imports and reads every import's source) and pg_read_all_data; not
-- PUBLIC, which reads the counts in kbench_imports.  Imports before 0.3.0
-- name no role: their rejections are kbench_admin's.  Dropped and made
-- again, so that this part re-runs (PUBLIC's SELECT: sql/code/90_privileges.sql).
ALTER TABLE kbench_import_rejections ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS kbench_import_rejections_visible ON kbench_import_rejections;
CREATE POLICY kbench_import_rejections_visible ON kbench_import_rejections FOR SELECT
	USING (imported_by = current_user OR pg_catalog.pg_has_role(current_user, 'pg_read_all_data', 'USAGE')
	       OR pg_catalog.pg_has_role(current_user, 'kbench_admin', 'USAGE'));
