-- Stand-ins for issue 16's kbench_change_points and kbench_alert_status, in
-- their shapes, for test/suites/charts.sh on a version without them: the
-- change point is the second run of a series's full pass, the alert the
-- second forward run of fused_add_rms_norm at hidden 8192 on the H100.
CREATE FUNCTION kbench_change_points(implementation text, operation text DEFAULT NULL, mode text DEFAULT NULL,
                                     environment text DEFAULT NULL, in_workload text DEFAULT NULL,
                                     penalty float8 DEFAULT NULL, min_size int DEFAULT 5, min_change_pct float8 DEFAULT 1)
	RETURNS TABLE (protocol text, device text, run_digest text, before_ns float8, after_ns float8, change_pct float8)
	LANGUAGE sql STABLE AS $$
	SELECT p.name, concat_ws(' ', e.product, e.form_factor), s.run_digest, b.primary_ns, s.primary_ns, 100.0 * (s.primary_ns - b.primary_ns) / b.primary_ns
	  FROM kbench_series s JOIN kbench_series b ON b.workload_digest = s.workload_digest AND b.protocol_digest = s.protocol_digest
	                                         AND b.environment_digest = s.environment_digest AND b.implementation = s.implementation AND b.point = 1
	  JOIN kbench_protocols p ON p.digest = s.protocol_digest JOIN kbench_environments e ON e.digest = s.environment_digest
	 WHERE s.implementation = $1 AND s.workload_digest = $5 AND s.point = 2 AND p.name LIKE '%full'
$$;
CREATE VIEW kbench_alert_status AS
SELECT 7::bigint AS id, 'open'::text AS status, 'percent'::text AS method, s.implementation AS family, w.name AS workload,
       'forward'::text AS mode, 'NVIDIA H100 80GB HBM3'::text AS device, s.run_digest, s.primary_ns::float8 AS value_ns,
       87.1::float8 AS change_pct, s.workload_digest, s.protocol_digest, s.environment_digest
  FROM kbench_series s JOIN kbench_workloads w ON w.digest = s.workload_digest JOIN kbench_protocols p ON p.digest = s.protocol_digest
 WHERE w.name = 'liger-fused-add-rms-norm-hidden8192-rows2048-fp32' AND s.point = 2 AND p.name LIKE '%forward';
