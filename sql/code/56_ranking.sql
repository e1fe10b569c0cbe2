--------------------------------------------------------------------------
-- Ranking by the difference
--------------------------------------------------------------------------

-- kbench_records ranks by the 95% interval of the difference between two
-- implementations' bests, as kernelindex.dev's ranking rules say: b is
-- strictly slower than a only when (b - a) minus the half-widths facing each
-- other, combined in quadrature, is still above zero:
--   (b.primary - a.primary) > sqrt((b.primary - b.low)^2 + (a.high - a.primary)^2)
-- where low..high is the run's spread (the 95% interval of the median from
-- raw samples where present, else p20..p80).  rank = 1 + the number of
-- implementations strictly faster; ties_leader: not strictly slower than the
-- leader.  diff_low_ns..diff_high_ns: that interval of (this - the leader).
-- The 0.1.0 rule (spreads overlapping the leader's share rank 1; else 1 +
-- the number whose spread lies wholly below) stays in overlap_rank and
-- overlap_ties_leader.
CREATE OR REPLACE VIEW kbench_records AS
SELECT b.workload_digest, b.protocol_digest, b.environment_digest,
       o.name AS operation, kbench_protocol_mode(p.name) AS mode, w.name AS workload, w.axes,
       _kernelindex.float_dtype(w.dtypes) AS dtype, e.product, e.form_factor,
       b.implementation_digest, i.name AS implementation,
       b.run_digest, b.primary_ns, b.low_ns, b.high_ns, b.observed_at,
       1 + (SELECT count(*) FROM kbench_cohort_bests c
             WHERE c.workload_digest = b.workload_digest AND c.protocol_digest = b.protocol_digest
               AND c.environment_digest = b.environment_digest
               AND b.primary_ns - c.primary_ns > sqrt(greatest(b.primary_ns - b.low_ns, 0)::float8 ^ 2
                                                      + greatest(c.high_ns - c.primary_ns, 0)::float8 ^ 2)) AS rank,
       b.run_digest = l.run_digest AS leader,
       b.run_digest <> l.run_digest
         AND NOT b.primary_ns - l.primary_ns > sqrt(greatest(b.primary_ns - b.low_ns, 0)::float8 ^ 2
                                                    + greatest(l.high_ns - l.primary_ns, 0)::float8 ^ 2) AS ties_leader,
       round(b.primary_ns::numeric / l.primary_ns, 3) AS vs_leader,
       round(b.primary_ns - l.primary_ns - sqrt(greatest(b.primary_ns - b.low_ns, 0)::float8 ^ 2
                                                + greatest(l.high_ns - l.primary_ns, 0)::float8 ^ 2))::bigint AS diff_low_ns,
       round(b.primary_ns - l.primary_ns + sqrt(greatest(b.high_ns - b.primary_ns, 0)::float8 ^ 2
                                                + greatest(l.primary_ns - l.low_ns, 0)::float8 ^ 2))::bigint AS diff_high_ns,
       CASE WHEN b.low_ns <= l.high_ns AND l.low_ns <= b.high_ns THEN 1
            ELSE 1 + (SELECT count(*) FROM kbench_cohort_bests c
                       WHERE c.workload_digest = b.workload_digest AND c.protocol_digest = b.protocol_digest
                         AND c.environment_digest = b.environment_digest AND c.high_ns < b.low_ns) END AS overlap_rank,
       b.run_digest <> l.run_digest AND b.low_ns <= l.high_ns AND l.low_ns <= b.high_ns AS overlap_ties_leader,
       _kernelindex.op_key(o.name) AS operation_key, _kernelindex.device_key(e) AS device_key,
       _kernelindex.run_unstable(r.manifest) AS unstable
  FROM kbench_cohort_bests b
  CROSS JOIN LATERAL (SELECT c.run_digest, c.primary_ns, c.low_ns, c.high_ns FROM kbench_cohort_bests c
                       WHERE c.workload_digest = b.workload_digest AND c.protocol_digest = b.protocol_digest
                         AND c.environment_digest = b.environment_digest
                       ORDER BY c.primary_ns, c.observed_at, c.run_digest LIMIT 1) l
  LEFT JOIN kbench_workloads w ON w.digest = b.workload_digest
  LEFT JOIN kbench_operations o ON o.digest = w.operation_digest
  LEFT JOIN kbench_protocols p ON p.digest = b.protocol_digest
  LEFT JOIN kbench_environments e ON e.digest = b.environment_digest
  LEFT JOIN kbench_implementations i ON i.digest = b.implementation_digest
  LEFT JOIN kbench_runs r ON r.digest = b.run_digest;
COMMENT ON VIEW kbench_records IS 'per cohort, each implementation''s best competing run; rank = 1 + the implementations strictly faster (95% interval of the difference above zero); the 0.1.0 overlap rule in overlap_rank; unstable: the run''s sampling stopped at a cap before its noise settled';

-- kbench_leaders names the implementations tied with each record the same
-- way (the overlap rule's in overlap_tied_implementations).
CREATE OR REPLACE VIEW kbench_leaders AS
SELECT l.workload_digest, l.protocol_digest, l.environment_digest,
       o.name AS operation, kbench_protocol_mode(p.name) AS mode, w.name AS workload, w.axes,
       e.product, e.form_factor, l.implementation_digest, i.name AS implementation,
       l.run_digest, l.primary_ns, l.low_ns, l.high_ns, l.observed_at,
       ARRAY(SELECT c.implementation_digest FROM kbench_cohort_bests c
              WHERE c.workload_digest = l.workload_digest AND c.protocol_digest = l.protocol_digest
                AND c.environment_digest = l.environment_digest AND c.run_digest <> l.run_digest
                AND NOT c.primary_ns - l.primary_ns > sqrt(greatest(c.primary_ns - c.low_ns, 0)::float8 ^ 2
                                                           + greatest(l.high_ns - l.primary_ns, 0)::float8 ^ 2)
              ORDER BY c.primary_ns) AS tied_implementations,
       ARRAY(SELECT c.implementation_digest FROM kbench_cohort_bests c
              WHERE c.workload_digest = l.workload_digest AND c.protocol_digest = l.protocol_digest
                AND c.environment_digest = l.environment_digest AND c.run_digest <> l.run_digest
                AND c.low_ns <= l.high_ns AND l.low_ns <= c.high_ns
              ORDER BY c.primary_ns) AS overlap_tied_implementations,
       _kernelindex.op_key(o.name) AS operation_key, _kernelindex.device_key(e) AS device_key
  FROM (SELECT DISTINCT ON (b.workload_digest, b.protocol_digest, b.environment_digest) b.*
          FROM kbench_cohort_bests b
         ORDER BY b.workload_digest, b.protocol_digest, b.environment_digest, b.primary_ns, b.observed_at, b.run_digest) l
  LEFT JOIN kbench_workloads w ON w.digest = l.workload_digest
  LEFT JOIN kbench_operations o ON o.digest = w.operation_digest
  LEFT JOIN kbench_protocols p ON p.digest = l.protocol_digest
  LEFT JOIN kbench_environments e ON e.digest = l.environment_digest
  LEFT JOIN kbench_implementations i ON i.digest = l.implementation_digest;
COMMENT ON VIEW kbench_leaders IS 'each cohort''s record: the leading run and the implementations not strictly slower (95% interval of the difference); the overlap rule''s ties in overlap_tied_implementations';
-- Reading the records is for everyone, as reading the catalog is.
GRANT SELECT ON kbench_records, kbench_leaders TO PUBLIC;
