-- A stand-in for issue 15's kbench_memory_sweep, in its shape, for
-- test/suites/charts.sh on a version without it: each sweep point's peak
-- memory is 64 KiB times the axis value (hidden 4096: 256 MiB), with a
-- p20..p80 of 60,000 and 70,000 bytes times the value.
CREATE FUNCTION kbench_memory_sweep(operation text, mode text, axis text, environment text DEFAULT NULL,
                                    implementation text DEFAULT NULL)
	RETURNS TABLE (axis_value numeric, implementation_name text, device text, dtype text, fixed_axes jsonb,
	               peak_bytes bigint, p20_bytes bigint, p80_bytes bigint, ref text, observed_at timestamptz)
	LANGUAGE sql STABLE AS $$
	SELECT s.axis_value, s.implementation_name, s.device, s.dtype, s.fixed_axes,
	       (s.axis_value * 65536)::bigint, (s.axis_value * 60000)::bigint, (s.axis_value * 70000)::bigint,
	       'liger-kernel-bench/' || row_number() OVER (ORDER BY s.run_digest), s.observed_at
	  FROM kbench_sweep(operation, mode, axis, environment, implementation) s
$$;
