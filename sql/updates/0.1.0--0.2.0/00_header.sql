-- kernelindex upgrade script 0.1.0 -> 0.2.0, assembled by the Makefile from
-- sql/updates/0.1.0--0.2.0/NN_*.sql.  Every change to an SQL object between
-- the two versions is here too; test/suites/upgrade.sh checks that an
-- updated 0.1.0 install equals a fresh 0.2.0 one.
\echo Use "ALTER EXTENSION kernelindex UPDATE TO '0.2.0'" to load this file. \quit
