-- Implementations other than kbench's own (docs/BYO.md): reading them and
-- registering code to run; the table is sql/schema/35_implementations.sql.

REVOKE ALL ON kbench_registered_implementations FROM PUBLIC;
GRANT SELECT ON kbench_registered_implementations TO PUBLIC;
-- The registration itself (src/implementations.c): stores the
-- ImplementationRevision of the entry's file (entry, language, version, the
-- sha256 of the file: a changed file is a new revision) and returns its
-- digest.  Runs as the extension's owner; EXECUTE for kbench_admin only.
CREATE OR REPLACE FUNCTION _kernelindex.register_implementation(name text, operation text, entry text, version text DEFAULT NULL)
	RETURNS text AS 'MODULE_PATHNAME', 'kbench_register_implementation'
	LANGUAGE C VOLATILE SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp;
REVOKE ALL ON FUNCTION _kernelindex.register_implementation(text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION _kernelindex.register_implementation(text, text, text, text) TO kbench_admin;

-- Register code to run, for kbench_admin only:
--   SELECT kbench_register_implementation('my-ln', 'layer_norm', 'python:/srv/kbench/ln.py:layer_norm', '1.0');
-- Everyone may call this front (SECURITY INVOKER), so that a caller who is
-- not kbench_admin is told which role registers code (issue 29), rather
-- than PostgreSQL's bare "permission denied for function"; the privilege
-- itself is still the one on _kernelindex.register_implementation.
CREATE OR REPLACE FUNCTION kbench_register_implementation(name text, operation text, entry text, version text DEFAULT NULL)
	RETURNS text LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	IF NOT pg_catalog.pg_has_role(current_user, 'kbench_admin', 'USAGE') THEN
		RAISE EXCEPTION 'permission denied to register code: role "%" is not a member of kbench_admin', current_user
			USING ERRCODE = 'insufficient_privilege',
			DETAIL = 'Registered code runs as the server''s operating-system user, so only kbench_admin registers it.',
			HINT = format('A superuser (or an admin of kbench_admin) grants it: GRANT kbench_admin TO %I;  Or ask one to register the code.', current_user);
	END IF;
	RETURN _kernelindex.register_implementation(name, operation, entry, version);
END $$;
REVOKE ALL ON FUNCTION kbench_register_implementation(text, text, text, text) FROM PUBLIC, kbench_admin;
GRANT EXECUTE ON FUNCTION kbench_register_implementation(text, text, text, text) TO PUBLIC;
