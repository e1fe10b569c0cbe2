-- kernelindex upgrade script 0.2.0 -> 0.3.0, assembled by the Makefile from
-- sql/updates/0.2.0--0.3.0/NN_*.sql.  0.2.0 is released (the git tag 0.2.0,
-- sql/released/RELEASES); test/suites/upgrade.sh installs 0.2.0 from that
-- commit's own parts and checks that the updated database equals a fresh
-- 0.3.0 one.  Fragments here hold what code cannot re-run (new columns,
-- DROPs of objects whose result type changes); links run install parts.
\echo Use "ALTER EXTENSION kernelindex UPDATE TO '0.3.0'" to load this file. \quit
