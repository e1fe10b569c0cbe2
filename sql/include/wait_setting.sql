-- \i sql/include/wait_setting.sql (pg_regress runs psql in the repository root, the test on its
-- standard input): after pg_reload_conf(), wait until this session has the new value
-- of :setting (:want), at most 300 tries 0.1 s apart (a backend rereads the file between
-- statements, once the postmaster has).  The caller sets wait_tries to 0 and ECHO to none (the
-- number of tries must not show in the expected output).
SELECT current_setting(:'setting') = :'want' OR :wait_tries >= 300 AS wait_done, :wait_tries + 1 AS wait_tries \gset
\if :wait_done
\else
SELECT pg_sleep(0.1) \gset
\ir wait_setting.sql
\endif
