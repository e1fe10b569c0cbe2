--------------------------------------------------------------------------
-- The export: the catalog as JSON lines.  It reads what 0.2.0 added to the
-- catalog (raw samples, retractions, supersessions, reproduction marks,
-- memory observations); plpgsql, so what it reads may come in later files.
--------------------------------------------------------------------------

-- The catalog as JSON lines in the kernelindex.dev export format
-- ({"table": ..., "row": {...}}), which re-import to the same rows and digests.
-- Rows that came from an export keep that export's columns.  A run's kept
-- raw samples (rawSamplesNs), its retraction (retractedAt, retractionReason)
-- and supersession (supersededBy, supersessionReason) go out in its row and
-- come back in through kbench_import_catalog: export, import into an empty
-- database and export again gives the same bytes.
CREATE OR REPLACE FUNCTION kbench_export_catalog() RETURNS SETOF text
	LANGUAGE sql STABLE SET search_path = @extschema@, pg_temp AS $$
	SELECT jsonb_build_object('table', t, 'row', row)::text FROM (
		SELECT 1 AS ord, 'operations' AS t, o.digest,
		       coalesce(s.row, '{}') || jsonb_build_object('semanticDigest', o.digest, 'manifest', o.manifest) AS row
		  FROM kbench_operations o LEFT JOIN kbench_catalog_source_rows s ON s.table_name = 'operations' AND s.digest = o.digest
		UNION ALL
		SELECT 2, 'projects', p.digest, coalesce(s.row, '{}') || jsonb_build_object('manifest', p.manifest)
		  FROM kbench_projects p LEFT JOIN kbench_catalog_source_rows s ON s.table_name = 'projects' AND s.digest = p.digest
		UNION ALL
		SELECT 3, 'workloads', w.digest,
		       coalesce(s.row, '{}') || jsonb_build_object('workloadDigest', w.digest, 'manifest', w.manifest)
		  FROM kbench_workloads w LEFT JOIN kbench_catalog_source_rows s ON s.table_name = 'workloads' AND s.digest = w.digest
		UNION ALL
		SELECT 4, 'implementations', i.digest,
		       coalesce(s.row, '{}') || jsonb_build_object('implementationDigest', i.digest, 'manifest', i.manifest)
		  FROM kbench_implementations i LEFT JOIN kbench_catalog_source_rows s ON s.table_name = 'implementations' AND s.digest = i.digest
		UNION ALL
		SELECT 5, 'benchmark_runs', r.digest,
		       coalesce(s.row, '{}') || kbench_reproduction_marks(r.digest) || jsonb_build_object('runDigest', r.digest, 'manifest',
		           jsonb_build_object('run', r.manifest, 'protocol', p.manifest, 'environment', e.manifest))
		       || CASE WHEN r.raw_samples_ns IS NOT NULL
		               THEN jsonb_build_object('rawSamplesNs', to_jsonb(r.raw_samples_ns)) ELSE '{}' END
		       || CASE WHEN r.retracted_at IS NOT NULL
		               THEN jsonb_build_object('retractedAt', to_char(r.retracted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
		                                       'retractionReason', r.retraction_reason) ELSE '{}' END
		       || CASE WHEN r.superseded_by IS NOT NULL
		               THEN jsonb_build_object('supersededBy', r.superseded_by, 'supersessionReason', r.supersession_reason) ELSE '{}' END
		  FROM kbench_runs r
		  JOIN kbench_protocols p ON p.digest = r.protocol_digest
		  JOIN kbench_environments e ON e.digest = r.environment_digest
		  LEFT JOIN kbench_catalog_source_rows s ON s.table_name = 'benchmark_runs' AND s.digest = r.digest
		UNION ALL
		SELECT 6, CASE m.kind WHEN 'ServingRun' THEN 'serving_runs' WHEN 'ServingConfiguration' THEN 'serving_configurations'
		                      WHEN 'ServingStackRevision' THEN 'serving_stack_revisions' WHEN 'ServingWorkload' THEN 'serving_workloads'
		                      ELSE 'model_revisions' END, m.digest,
		       coalesce(s.row, '{}') || jsonb_build_object(CASE m.kind WHEN 'ServingRun' THEN 'runDigest'
		           WHEN 'ServingConfiguration' THEN 'configurationDigest' WHEN 'ServingStackRevision' THEN 'stackDigest'
		           WHEN 'ServingWorkload' THEN 'workloadDigest' ELSE 'modelDigest' END, m.digest, 'manifest', m.manifest)
		  FROM kbench_serving_manifests m
		  LEFT JOIN kbench_catalog_source_rows s ON s.digest = m.digest AND s.table_name LIKE 'serving%' OR s.digest = m.digest AND s.table_name = 'model_revisions'
		UNION ALL
		SELECT 7, c.table_name, c.row_id, c.row FROM kbench_catalog_rows c
		UNION ALL
		SELECT 8, 'memory_observations', m.source || '/' || m.external_id, _kernelindex.memory_export_row(m, p.manifest, e.manifest)
		  FROM kbench_memory_observations m
		  LEFT JOIN kbench_protocols p ON p.digest = m.protocol_digest
		  LEFT JOIN kbench_environments e ON e.digest = m.environment_digest
	) x ORDER BY ord, digest
$$;
