-- Operations a user defined as data, registered from SQL (src/operations.c,
-- docs/OPERATIONS.md); the table is sql/schema/35_operations.sql.  Everyone
-- reads it (a definition and its reference are what the runs of the
-- operation mean); only the registration writes it.

REVOKE ALL ON kbench_registered_operations FROM PUBLIC;
GRANT SELECT ON kbench_registered_operations TO PUBLIC;

-- The registration (src/operations.c): reads the definition and its
-- reference.file from under kernelindex.implementation_directory, judges
-- them as kbench --op-file does (a bad one is refused, naming the field;
-- nothing of it is stored), stores both with their sha256 and the
-- definition's cost texts (kbench_operation_costs), and returns the
-- operation's name.  Runs as the extension's owner; EXECUTE for
-- kbench_admin only.
CREATE OR REPLACE FUNCTION _kernelindex.register_operation(path text)
	RETURNS text AS 'MODULE_PATHNAME', 'kbench_register_operation'
	LANGUAGE C VOLATILE SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp;
REVOKE ALL ON FUNCTION _kernelindex.register_operation(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION _kernelindex.register_operation(text) TO kbench_admin;

CREATE OR REPLACE FUNCTION _kernelindex.unregister_operation(name text)
	RETURNS boolean AS 'MODULE_PATHNAME', 'kbench_unregister_operation'
	LANGUAGE C VOLATILE SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp;
REVOKE ALL ON FUNCTION _kernelindex.unregister_operation(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION _kernelindex.unregister_operation(text) TO kbench_admin;

-- The fronts, callable by everyone so that a caller who is not kbench_admin
-- is told which role registers code; the privilege is the one on the
-- _kernelindex functions.
--   SELECT kbench_register_operation('/srv/kbench/affine.json');
CREATE OR REPLACE FUNCTION kbench_register_operation(path text)
	RETURNS text LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	IF NOT pg_catalog.pg_has_role(current_user, 'kbench_admin', 'USAGE') THEN
		RAISE EXCEPTION 'permission denied to register an operation: role "%" is not a member of kbench_admin', current_user
			USING ERRCODE = 'insufficient_privilege',
			DETAIL = 'A registered operation''s reference runs as the server''s operating-system user, so only kbench_admin registers one.',
			HINT = format('A superuser (or an admin of kbench_admin) grants it: GRANT kbench_admin TO %I;  Or ask one to register the operation.', current_user);
	END IF;
	RETURN _kernelindex.register_operation(path);
END $$;
REVOKE ALL ON FUNCTION kbench_register_operation(text) FROM PUBLIC, kbench_admin;
GRANT EXECUTE ON FUNCTION kbench_register_operation(text) TO PUBLIC;

-- Take a registered operation out (true when it was registered): queued
-- jobs of it then fail as an unknown operation; its runs stay.
CREATE OR REPLACE FUNCTION kbench_unregister_operation(name text)
	RETURNS boolean LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	IF NOT pg_catalog.pg_has_role(current_user, 'kbench_admin', 'USAGE') THEN
		RAISE EXCEPTION 'permission denied to unregister an operation: role "%" is not a member of kbench_admin', current_user
			USING ERRCODE = 'insufficient_privilege',
			HINT = format('A superuser (or an admin of kbench_admin) grants it: GRANT kbench_admin TO %I;', current_user);
	END IF;
	RETURN _kernelindex.unregister_operation(name);
END $$;
REVOKE ALL ON FUNCTION kbench_unregister_operation(text) FROM PUBLIC, kbench_admin;
GRANT EXECUTE ON FUNCTION kbench_unregister_operation(text) TO PUBLIC;
