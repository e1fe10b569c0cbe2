# 007_digest_plans.pl: every API that takes a digest or a prefix of one
# reads it by index (issue 31 item 1), as the plans say, not a timer.
#
# A node without workers (preload => 0) gets a catalog big enough that the
# planner reads a table whole when no index serves the condition (3,000
# operations, workloads, implementations, protocols and environments, 30,000
# runs; ANALYZE).  Each call is made with auto_explain at NOTICE (nested
# statements, JSON), so the plans of the statements inside the resolvers
# (plpgsql) come back to the client; for each call the table it names by
# digest is read by an index whose Index Cond carries the digest (= for a
# whole one, ~>=~ for a prefix), and never by a Seq Scan or an index scan
# that filters on the digest (starts_with as a Filter: every row read).
# The ambiguity and short-prefix errors are compared word for word.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JSON::PP;
use KernelindexTest;

my $node = ki_node('plans', preload => 0, database => 'kbench');

ki_q($node, <<'SQL');
SET synchronous_commit = off;
INSERT INTO kbench_operations (digest, name, family, manifest, source)
SELECT 'sha256:' || encode(sha256(convert_to('t op ' || i, 'UTF8')), 'hex'), 't-op-' || i, 't', '{"synthetic": true}', 't'
  FROM generate_series(1, 3000) i;
INSERT INTO kbench_workloads (digest, kind, name, operation_digest, operation_resolved, axes, dtypes, manifest, source)
SELECT 'sha256:' || encode(sha256(convert_to('t wl ' || i, 'UTF8')), 'hex'), 'WorkloadCase', 't-wl-' || i,
       'sha256:' || encode(sha256(convert_to('t op ' || (i % 3000 + 1), 'UTF8')), 'hex'), true, '{"rows": 8}', '{fp32}',
       '{"synthetic": true}', 't'
  FROM generate_series(1, 3000) i;
INSERT INTO kbench_implementations (digest, name, operation_digest, operation_resolved, language, version, manifest, source)
SELECT 'sha256:' || encode(sha256(convert_to('t impl ' || i, 'UTF8')), 'hex'), 't-impl-' || i,
       'sha256:' || encode(sha256(convert_to('t op ' || (i % 3000 + 1), 'UTF8')), 'hex'), true, 'cuda', '1.0',
       '{"synthetic": true}', 't'
  FROM generate_series(1, 3000) i;
-- two implementations whose digests share their first 12 hex digits
INSERT INTO kbench_implementations (digest, name, operation_digest, operation_resolved, language, version, manifest, source)
SELECT 'sha256:bcdbcdbcdbcd' || lpad(i::text, 52, '0'), 't-twin-' || i,
       'sha256:' || encode(sha256(convert_to('t op 1', 'UTF8')), 'hex'), true, 'cuda', '1.0', '{"synthetic": true}', 't'
  FROM generate_series(1, 2) i;
INSERT INTO kbench_protocols (digest, family, harness, timer, primary_statistic, name, manifest, source)
SELECT 'sha256:' || encode(sha256(convert_to('t proto ' || i, 'UTF8')), 'hex'), 't', 't', 'cuda_events', 'median', 't-proto-' || i,
       '{"synthetic": true}', 't'
  FROM generate_series(1, 3000) i;
INSERT INTO kbench_environments (digest, vendor, product, architecture, name, manifest, source)
SELECT 'sha256:' || encode(sha256(convert_to('t env ' || i, 'UTF8')), 'hex'), 'nvidia', 'NVIDIA T' || i, 'sm_90', 't-env-' || i,
       '{"synthetic": true}', 't'
  FROM generate_series(1, 3000) i;
ALTER TABLE kbench_runs DISABLE TRIGGER records;
ALTER TABLE kbench_runs DISABLE TRIGGER alerts;
-- 30,000 runs, of 50 implementations that are not in the catalog
INSERT INTO kbench_runs (digest, implementation_digest, workload_digest, protocol_digest, environment_digest, status,
                         observed_at, primary_statistic, primary_ns, median_ns, samples, source, external_id, name, manifest)
SELECT 'sha256:' || md5('t run ' || i) || md5('t run ' || i || '/2'),
       'sha256:' || md5('t ri ' || (i % 50)) || md5('t ri ' || (i % 50) || '/2'),
       'sha256:' || encode(sha256(convert_to('t wl ' || (i % 3000 + 1), 'UTF8')), 'hex'),
       'sha256:' || encode(sha256(convert_to('t proto ' || (i % 2 + 1), 'UTF8')), 'hex'),
       'sha256:' || encode(sha256(convert_to('t env ' || (i % 2 + 1), 'UTF8')), 'hex'),
       'passed', timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute', 'median', 1000 + i % 97, 1000 + i % 97, 3,
       't', 't' || i, 't-run-' || i, '{"synthetic": true}'
  FROM generate_series(1, 30000) i;
-- seven runs whose digests share their first 12 hex digits
INSERT INTO kbench_runs (digest, implementation_digest, workload_digest, protocol_digest, environment_digest, status,
                         observed_at, primary_statistic, primary_ns, median_ns, samples, source, external_id, name, manifest)
SELECT 'sha256:abcabcabcabc' || lpad(i::text, 52, '0'), 'sha256:' || md5('t ri 0') || md5('t ri 0/2'),
       'sha256:' || encode(sha256(convert_to('t wl 1', 'UTF8')), 'hex'),
       'sha256:' || encode(sha256(convert_to('t proto 1', 'UTF8')), 'hex'),
       'sha256:' || encode(sha256(convert_to('t env 1', 'UTF8')), 'hex'),
       'passed', timestamptz '2025-01-01 00:00:00+00', 'median', 1000, 1000, 3, 't', 'twin' || i, 't-twin-run-' || i, '{"synthetic": true}'
  FROM generate_series(1, 7) i;
ALTER TABLE kbench_runs ENABLE TRIGGER records;
ALTER TABLE kbench_runs ENABLE TRIGGER alerts;
SELECT kbench_rebuild_records();
ANALYZE;
SQL

my $run = ki_q($node, "SELECT digest FROM kbench_runs WHERE name = 't-run-777'");
my $ri = ki_q($node, "SELECT implementation_digest FROM kbench_runs WHERE name = 't-run-777'");
my %d = map { $_ => ki_q($node, "SELECT digest FROM kbench_$_ WHERE name = 't-" . { operations => 'op', workloads => 'wl',
	implementations => 'impl', protocols => 'proto', environments => 'env' }->{$_} . "-1234'") }
  qw(operations workloads implementations protocols environments);
sub pre { return substr($_[0], 7, $_[1] // 16) }    # hex digits of a digest, without sha256:

# The plans of every statement a call runs (auto_explain at NOTICE, JSON).
sub plans_of
{
	my ($call) = @_;
	my ($rc, $out, $err) = $node->psql('kbench',
		"LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on;"
		  . " SET auto_explain.log_format = json; SET auto_explain.log_level = notice; SET client_min_messages = notice;"
		  . " SELECT $call");
	die "$call failed: $err" if $rc != 0;
	note($err) if $ENV{KI_PLANS_DEBUG};
	my @plans;
	# each plan is a JSON object from a line '{' to a line '}'
	push @plans, decode_json($1) while $err =~ /^(\{\n.*?^\})$/msg;
	return @plans;
}

# The scan nodes of plans: [node type, relation, index, index cond, filter].
sub scans
{
	my @out;
	my @todo = map { $_->{Plan} } @_;
	while (my $p = shift @todo)
	{
		push @out, [ $p->{'Node Type'}, $p->{'Relation Name'} // '', $p->{'Index Name'} // '',
			$p->{'Index Cond'} // '', $p->{Filter} // '' ]
		  if exists $p->{'Relation Name'} || exists $p->{'Index Name'};
		push @todo, @{ $p->{Plans} // [] };
	}
	return @out;
}

# CALL reads TABLE by an index whose condition compares COLUMN with OP, and
# no scan of TABLE reads every row to filter on COLUMN.
sub by_index
{
	my ($call, $table, $column, $op, $what) = @_;
	my @s = scans(plans_of($call));
	my @hit = grep { ($_->[1] eq $table || $_->[2] =~ /^\Q$table\E_/) && $_->[3] =~ /\b\Q$column\E \Q$op\E/ } @s;
	my @whole = grep {
		($_->[1] eq $table || $_->[2] =~ /^\Q$table\E_/)
		  && ($_->[0] eq 'Seq Scan' || ($_->[0] =~ /^Index/ && $_->[3] eq ''))
		  && $_->[4] =~ /\b\Q$column\E\b|starts_with/
	} @s;
	ok(@hit && !@whole, $what)
	  or diag(scalar(@s) . " scans:\n" . join("\n", map { join(" | ", @$_) } @s));
}

by_index("_kernelindex.resolve_run('$run')", 'kbench_runs', 'digest', '=',
	'a whole run digest is one probe of an index of kbench_runs');
by_index("_kernelindex.resolve_run('" . pre($run) . "')", 'kbench_runs', 'digest', '~>=~',
	'a run digest prefix is a range of kbench_runs_digest_prefix_idx');
by_index("kbench_cohort_of('" . pre($run) . "')", 'kbench_runs', 'digest', '~>=~',
	'kbench_cohort_of(a prefix) reads the run by index');
by_index("* FROM kbench_record_history_of(kbench_cohort_of('$run'))", 'kbench_runs', 'digest', '=',
	'kbench_record_history_of(kbench_cohort_of(a digest)) reads the run by index');
by_index("kbench_run_version('$run')", 'kbench_runs', 'digest', '=',
	'kbench_run_version reads the run by its primary key');
by_index("_kernelindex.resolve_operation('" . pre($d{operations}) . "')", 'kbench_operations', 'digest', '~>=~',
	'an operation digest prefix is a range of kbench_operations_digest_prefix_idx');
by_index("_kernelindex.resolve_operation('$d{operations}')", 'kbench_operations', 'digest', '=',
	'a whole operation digest is an index probe');
by_index("_kernelindex.resolve_implementation(NULL, '" . pre($d{implementations}) . "')", 'kbench_implementations', 'digest', '~>=~',
	'an implementation digest prefix is a range of kbench_implementations_digest_prefix_idx');
by_index("_kernelindex.resolve_implementation(NULL, '" . pre($ri) . "')", 'kbench_runs', 'implementation_digest', '~>=~',
	'an implementation known only from runs: its prefix is a range of kbench_runs_implementation_digest_idx');
by_index("_kernelindex.resolve_protocols('" . pre($d{protocols}) . "')", 'kbench_protocols', 'digest', '~>=~',
	'a protocol digest prefix is a range of kbench_protocols_digest_prefix_idx');
by_index("_kernelindex.resolve_environments('" . pre($d{environments}) . "')", 'kbench_environments', 'digest', '~>=~',
	'an environment digest prefix is a range of kbench_environments_digest_prefix_idx');
by_index("_kernelindex.resolve_workload('$d{workloads}')", 'kbench_workloads', 'digest', '=',
	'a whole workload digest is a primary-key probe');
by_index("_kernelindex.resolve_workload('" . pre($d{workloads}) . "')", 'kbench_workloads', 'digest', '~>=~',
	'a workload digest prefix is a range of kbench_workloads_digest_prefix_idx');
by_index("* FROM kbench_workload_cost('" . pre($d{workloads}, 20) . "', 'forward')", 'kbench_workloads', 'digest', '~>=~',
	'kbench_workload_cost(a prefix) reads the workload by index');

# the queue-time estimate's past run (src/estimate.c): the workload's cohorts' bests, not its runs
my ($pw, $pe) = split /\|/, ki_q($node, "SELECT workload_digest, environment_digest FROM kbench_runs WHERE name = 't-run-777'");
by_index("_kernelindex.past_call_ns('$pw', '$ri', '$pe')", 'kbench_cohort_bests', 'workload_digest', '=',
	"the estimate's past call is read from kbench_cohort_bests by its primary key");
ok(!grep({ $_->[1] eq 'kbench_runs' } scans(plans_of("_kernelindex.past_call_ns('$pw', '$ri', '$pe')"))),
	'... and reads no run');
is(ki_q($node, "SELECT _kernelindex.past_call_ns('$pw', '$ri', '$pe')"),
	ki_q($node, "SELECT min(primary_ns) FROM kbench_runs WHERE workload_digest = '$pw' AND implementation_digest = '$ri'"
		  . " AND environment_digest = '$pe'"),
	"... and is its best run's time (these runs are of one cohort)");
is(ki_q($node, "SELECT coalesce(_kernelindex.past_call_ns('$pw', '$ri', 'sha256:none'), -1)"), '-1',
	'no past run in another environment');

# The answers and the errors are the ones the resolvers gave before.
is(ki_q($node, "SELECT _kernelindex.resolve_run('" . uc(pre($run, 30)) . "')"), $run, 'a prefix in upper case names its run');
is(ki_q($node, "SELECT _kernelindex.resolve_implementation(NULL, '" . pre($ri) . "')"), "{$ri}",
	'an implementation known only from runs, by prefix');
sub error_of
{
	my ($sql) = @_;
	my ($rc, $out, $err) = $node->psql('kbench', "\\set VERBOSITY default\n$sql");
	$err =~ s/^psql:[^\n]*?(ERROR|DETAIL|HINT)/$1/mg;
	$err =~ s/^CONTEXT:.*//ms;    # where it was raised (the line numbers of the functions)
	return $err =~ s/\s+$//r;
}
is(error_of("SELECT _kernelindex.resolve_run('sha256:abcabcabcabc')"),
	"ERROR:  run \"sha256:abcabcabcabc\" is ambiguous\nDETAIL:  It is the start of "
	  . join(', ', map { 'sha256:abcabcabcabc' . sprintf('%052d', $_) } 1 .. 5) . ", \xe2\x80\xa6.\nHINT:  Give more of the digest.",
	'an ambiguous run prefix lists five of its runs, then an ellipsis');
is(error_of("SELECT _kernelindex.resolve_run('abcabcabcabc" . ('0' x 51) . "', 'superseding')"),
	"ERROR:  superseding run \"abcabcabcabc" . ('0' x 51) . "\" is ambiguous\nDETAIL:  It is the start of "
	  . join(', ', map { 'sha256:abcabcabcabc' . sprintf('%052d', $_) } 1 .. 5) . ", \xe2\x80\xa6.\nHINT:  Give more of the digest.",
	'... with its role');
is(error_of("SELECT _kernelindex.resolve_run('sha256:abcabcabca')"),
	"ERROR:  run \"sha256:abcabcabca\" is not a digest\nHINT:  Name a run by its digest (sha256: and 64 hex digits) or 12 or more hex digits of it.",
	'a prefix of fewer than 12 hex digits is not a digest');
is(error_of("SELECT _kernelindex.resolve_run('sha256:000000000000')"),
	"ERROR:  no run sha256:000000000000 in the catalog\nHINT:  kbench_runs lists the runs; ingest a run before naming it.",
	'an unknown prefix is no run');
is(error_of("SELECT _kernelindex.resolve_implementation(NULL, 'sha256:bcdbcdbcdbcd')"),
	"ERROR:  implementation \"sha256:bcdbcdbcdbcd\" is ambiguous\nDETAIL:  It matches t-twin-1, t-twin-2.\nHINT:  Name the implementation in full.",
	'an ambiguous implementation prefix lists the implementations');
is(error_of("SELECT _kernelindex.resolve_implementation(NULL, 'sha256:" . substr(md5_hex_of($node, 't ri 0'), 0, 12) . "')"), '',
	'one implementation known only from runs is not ambiguous');

sub md5_hex_of { return ki_q($_[0], "SELECT md5('$_[1]')") }

done_testing();
