-- kbench_regressions gains operation_key and pass (issue 13: every result
-- names the operation by its short name and the timed pass).  A function's
-- result type cannot change in place: the 0.1.0 one is dropped, and
-- 87_regressions.sql creates it from sql/42_regressions_report.sql.
DROP FUNCTION kbench_regressions(text, text, text, text, text, int, float8, float8, int, text);
