-- One name per concept (docs/ARCHITECTURE.md, "Layout and names"): no
-- function shares its name with a type, a table or a view.  Renaming keeps
-- each object's OID, so the functions and views that use them follow;
-- bodies kept as text (plpgsql, $$...$$) are written with the new names
-- where they are made.  This fragment runs first, before the fragments that
-- make objects naming the new names (kbench__run_columns returns
-- kbench_run_row).
--
-- kbench_run is the function that queues a job; the typed shape of a run
-- (and, alike, of a protocol and an environment) is a *_row type.
ALTER TYPE kbench_run RENAME TO kbench_run_row;
ALTER TYPE kbench_protocol RENAME TO kbench_protocol_row;
ALTER TYPE kbench_environment RENAME TO kbench_environment_row;

-- kbench_workers is the view; the function under it is an internal helper,
-- STABLE as it writes nothing (PUBLIC, who reads the view, runs it).
ALTER FUNCTION kbench_workers() RENAME TO kbench__workers;
ALTER FUNCTION kbench__workers() STABLE;
-- (The view kbench_workers itself is replaced by 85_fleet.sql, a link to
-- sql/85_fleet.sql: workers and agents.)

-- kbench_memory_records (the view) beside kbench_memory_records_of(operation,
-- mode, environment) is new in 0.2.0: made under its name by its fragment.
