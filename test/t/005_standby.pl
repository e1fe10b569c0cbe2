# 005_standby.pl: read scale on a hot standby (docs/FLEET.md, "Replicas").  A
# primary and a streaming standby (a base backup of the primary that follows
# it); the Liger history imported on the primary and replayed; then on the
# standby:
#   - the record, regression and speedup queries give the primary's rows;
#   - every function PUBLIC may execute (the read functions, listed from the
#     catalog) is called with sample arguments and every view is read: none
#     may fail for being on a standby (a write, a temporary table, a
#     sequence, a cache).  Other errors (a sample argument that does not
#     fit) are listed as comments.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use KernelindexTest;

my $primary = ki_node('primary', devices => 'cpu', allows_streaming => 1);
sub query { return ki_q($primary, @_); }
sub qs { return ki_q($primary->{_ki_standby}, @_); }
my $csv = "$KI_ROOT/data/liger/all_benchmark_data.csv";

# the standby: a base backup of the primary that follows it
$primary->backup('base');
pass('pg_basebackup copies the primary (a standby of it: primary_conninfo, standby.signal)');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;
$standby->{_ki_database} = 'kbench';
$primary->{_ki_standby} = $standby;
is(qs('SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery (hot standby)');

# the history on the primary, then wait for the standby to replay it
query("SELECT count(*) FROM kbench_import_liger(pg_read_file('$csv'))");
query(qq{SELECT kbench_run('layer_norm', 'forward', jsonb_build_object('rows', 8 + g, 'hidden', 8),
   protocol => '$KI_TINY') FROM generate_series(1, 3) g});
ki_wait($primary, "SELECT count(*) = 0 FROM kbench_jobs WHERE status IN ('queued', 'running')");
my $lsn = query('SELECT pg_current_wal_lsn()');
$standby->poll_query_until('kbench', "SELECT pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn");
is(qs("SELECT pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn"), 't', "the standby replayed the primary's history");
my $runs = query('SELECT count(*) FROM kbench_runs');
is(qs('SELECT count(*) FROM kbench_runs'), $runs, "the standby has the primary's $runs runs");

# the same answers on both
sub same
{
	my ($sql, $what) = @_;
	my (undef, $a, $ae) = $primary->psql('kbench', "SELECT s::text FROM ($sql) s ORDER BY 1");
	my (undef, $b, $be) = $standby->psql('kbench', "SELECT s::text FROM ($sql) s ORDER BY 1");
	my (undef, $n) = $standby->psql('kbench', "SELECT count(*) FROM ($sql) s");
	$n = 0 unless $n =~ /^\d+$/;
	if ("$a$ae" eq "$b$be" && $n > 0) { pass("$what ($n rows, as on the primary)"); }
	else { fail("$what (primary and standby differ, or no rows: $n)"); diag(substr("$b$be", 0, 600)); }
}
my $impl = query('SELECT implementation FROM kbench_records GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1');
my $op = query("SELECT operation FROM kbench_records WHERE implementation = '$impl' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1");
my $other = query("SELECT implementation FROM kbench_records WHERE operation = '$op' AND implementation <> '$impl' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1");
same('SELECT * FROM kbench_records', 'kbench_records on the standby');
same(q{SELECT * FROM kbench_regressions(NULL, method => 'percent')}, 'kbench_regressions over every implementation on the standby');
same("SELECT * FROM kbench_speedup('$op', '$other', '$impl')", "kbench_speedup('$op', '$other', '$impl') on the standby");
same("SELECT * FROM kbench_speedup_summary('$op', '$other', '$impl')", 'kbench_speedup_summary on the standby');
same(q{SELECT kbench_chart_sweep('layer_norm', 'backward', 'hidden', 'NVIDIA H100 80GB HBM3')}, 'kbench_chart_sweep on the standby');
is(qs('SELECT length(kbench_report()) > 10000'), 't', 'kbench_report on the standby');

# every read function and view, from the catalog
my (undef, $out, $err) = $standby->psql('kbench', <<'SQL', extra_params => [ '-v', "op=$op", '-v', "impl=$impl", '-v', "other=$other" ]);
\set QUIET on
SELECT set_config('kbench.op', :'op', false), set_config('kbench.impl', :'impl', false),
       set_config('kbench.other', :'other', false) \gset
DO $check$
DECLARE
	f record;
	args text;
	run text := (SELECT digest FROM kbench_runs ORDER BY digest LIMIT 1);
	manifest text := (SELECT manifest::text FROM kbench_runs ORDER BY digest LIMIT 1);
	env text := (SELECT environment_digest FROM kbench_records LIMIT 1);
	op text := current_setting('kbench.op');
	impl text := current_setting('kbench.impl');
	other text := current_setting('kbench.other');
	state text;
	msg text;
	n_ok int := 0;
	n_other int := 0;
	n_bad int := 0;
BEGIN
	FOR f IN
		SELECT 'function' AS kind, format('%I.%I', n.nspname, p.proname) AS name, p.oid::regprocedure::text AS sig,
		       p.pronargs - p.pronargdefaults AS nreq, p.proargtypes, p.proargnames
		  FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid JOIN pg_namespace n ON n.oid = p.pronamespace
		 WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
		   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'kernelindex')
		   AND p.prokind = 'f' AND p.prorettype NOT IN ('trigger'::regtype, 'internal'::regtype)
		   AND (p.proacl IS NULL OR EXISTS (SELECT 1 FROM aclexplode(p.proacl) a
		                                     WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE'))
		UNION ALL
		SELECT 'view', format('%I.%I', n.nspname, c.relname), c.relname, 0, NULL, NULL
		  FROM pg_depend d JOIN pg_class c ON c.oid = d.objid JOIN pg_namespace n ON n.oid = c.relnamespace
		 WHERE d.classid = 'pg_class'::regclass AND d.deptype = 'e' AND c.relkind IN ('v', 'm')
		   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'kernelindex')
		 ORDER BY 1, 3
	LOOP
		IF f.kind = 'function' THEN
			SELECT coalesce(string_agg(
			         CASE WHEN t IN ('text'::regtype, 'name'::regtype) THEN quote_literal(
			                CASE WHEN a ~ 'digest|^run|^a$|^b$|^reported|^reference' THEN run
			                     WHEN a ~ 'operation|^op$' THEN op
			                     WHEN a ~ 'baseline' THEN other
			                     WHEN a ~ 'candidate|implementation|^impl' THEN impl
			                     WHEN a ~ 'mode' THEN 'forward'
			                     WHEN a ~ 'environment|device' THEN env
			                     WHEN a ~ 'kind' THEN 'records'
			                     ELSE op END) || '::' || t::text
			              WHEN t IN ('json'::regtype, 'jsonb'::regtype) THEN quote_literal(manifest) || '::' || t::text
			              WHEN t IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'numeric'::regtype,
			                         'float4'::regtype, 'float8'::regtype) THEN '1::' || t::text
			              WHEN t = 'bool'::regtype THEN 'false'
			              WHEN t = 'interval'::regtype THEN '''1 day''::interval'
			              WHEN t = 'timestamptz'::regtype THEN 'now()'
			              WHEN t = 'text[]'::regtype THEN 'ARRAY[' || quote_literal(run) || ']'
			              ELSE 'NULL::' || t::text END, ', ' ORDER BY i), '')
			  INTO args
			  FROM unnest(f.proargtypes::regtype[], coalesce(f.proargnames, '{}'::text[])) WITH ORDINALITY x(t, a, i)
			 WHERE i <= f.nreq;
		END IF;
		BEGIN
			IF f.kind = 'function' THEN
				EXECUTE format('SELECT count(*) FROM %s(%s)', f.name, args);
			ELSE
				EXECUTE format('SELECT count(*) FROM %s', f.name);
			END IF;
			n_ok := n_ok + 1;
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
			IF state IN ('25006', '0A000', '55000', '25P02', '42P16') OR msg ~* 'recovery|read-only|standby' THEN
				n_bad := n_bad + 1;
				RAISE NOTICE 'not ok - % % on the standby: % (%)', f.kind, f.sig, msg, state;
			ELSE
				n_other := n_other + 1;
				RAISE NOTICE '# % %: % (%)', f.kind, f.sig, msg, state;
			END IF;
		END;
	END LOOP;
	RAISE NOTICE 'counts % % %', n_ok, n_other, n_bad;
END
$check$;
SQL
my @notices = map { /NOTICE:  (.*)$/ ? $1 : () } split /\n/, $err;
for (@notices)
{
	if (/^not ok - (.*)$/) { fail($1); }
	elsif (/^# (.*)$/) { note($1); }
}
my ($counts) = map { /^counts (.*)$/ ? $1 : () } @notices;
my ($n_ok, $n_other, $n_bad) = split ' ', ($counts // '0 0 -1');
is($n_bad, 0, "no read function or view fails on the standby ($n_ok ran, $n_other refused their sample arguments)");
ok($n_ok > 50, 'more than 50 read functions and views ran on the standby')
  or diag(join("\n", grep { !/NOTICE/ } (split /\n/, $err)[ 0 .. 4 ]));
is(qs("SELECT count(*) FROM kbench_workers WHERE state <> 'stopped'"), 0, 'no worker runs on the standby');

done_testing();
