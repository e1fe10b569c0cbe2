# 003_crash_recovery.pl: the server crashes right after a staged catalog
# import that was rolled back, and comes back with the catalog it had (issue
# 24).  PostgreSQL 15 cannot finish crash recovery after an UNLOGGED table's
# TRUNCATE was rolled back and the abort record did not reach the disk
# ("could not create file ...: File exists", the cluster stays down); 0.2.0
# truncated its unlogged staging table at the end of every staged import.
# Each round: a staged import committed, then one rolled back (another session
# commits meanwhile, so the WAL of the import is on disk up to there), then at
# once a crash:
#   - a backend killed with SIGKILL (what a crashing function does: the
#     postmaster restarts every process through crash recovery);
#   - an immediate stop (pg_ctl stop -m immediate), then a start;
#   - kill -9 of the postmaster, its processes gone, then a start.
# After each: the server accepts connections, the log has no FATAL, and the
# catalog, the imports and the staged lines are what was committed.  Then
# lines staged by a kbench_admin and not imported survive an immediate stop.
# wal_writer_delay = 10s keeps the wal writer from writing the abort record
# before the crash (the window in which PostgreSQL's bug bites, made wide).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use KernelindexTest;
use Time::HiRes qw(usleep);

my $node = ki_node('crash', preload => 0, conf => ['wal_writer_delay = 10s']);
sub query { return ki_q($node, @_); }
my $tmp = PostgreSQL::Test::Utils::tempdir('crash');
query('CREATE TABLE crash_marker (n int)');
query('CREATE ROLE crash_admin LOGIN IN ROLE kbench_admin');
my $catalog = "$KI_ROOT/data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst";
system("zstd -q -dc '$catalog' | head -3000 >'$tmp/a.jsonl'");
system("zstd -q -dc '$catalog' | sed -n '3001,6000p' >'$tmp/b.jsonl'");
my $COPY_OPTS = q{WITH (FORMAT csv, QUOTE E'\x01', DELIMITER E'\x02')};

is(query("SELECT relpersistence FROM pg_class WHERE oid = 'kbench_import_staging'::regclass"), 'p',
	'the staging table is a logged table (no unlogged table is truncated)');

# What must survive: the catalog's digests and rows, the finished imports, the staged lines.
sub state
{
	return query(q{SELECT (SELECT count(*) || ':' || md5(coalesce(string_agg(digest, ',' ORDER BY digest), '')) FROM (
	       SELECT digest FROM kbench_operations UNION ALL SELECT digest FROM kbench_workloads
	       UNION ALL SELECT digest FROM kbench_implementations UNION ALL SELECT digest FROM kbench_runs) d)
	    || ' rows ' || (SELECT count(*) FROM kbench_catalog_rows)
	    || ' imports ' || (SELECT coalesce(string_agg(source || '=' || inserted, ',' ORDER BY id), '') FROM kbench_imports)
	    || ' staged ' || (SELECT count(*) FROM kbench_import_staging)});
}
# One round: a committed staged import of FILE, then a rolled-back one (nothing else staged:
# 0.2.0 truncated the table then); the crash comes right after the ROLLBACK.
my $before;
sub round
{
	my ($file, $name) = @_;
	$node->psql('postgres', qq{\\copy kbench_import_staging (line) FROM '$file' $COPY_OPTS
SELECT lines FROM kbench_import_catalog_staged('$name');});
	$before = state();
	$node->psql('postgres', qq{BEGIN;
\\copy kbench_import_staging (line) FROM '$file' $COPY_OPTS
SELECT lines FROM kbench_import_catalog_staged('$name rolled back');
\\! psql -X -q -c "INSERT INTO crash_marker VALUES (1)"
ROLLBACK;});
	return;
}
sub log_size { return -s $node->logfile; }
# Up again: accepts connections (a bounded poll), no FATAL in the log since offset $from.
# When not, the rest cannot run: the test ends there.
sub came_back
{
	my ($from, $what) = @_;
	$node->poll_query_until('postgres', 'SELECT true');
	my @fatal = grep { /FATAL|PANIC/ && !/the database system is (starting up|in recovery mode|shutting down|not yet accepting connections)/ }
	  split /\n/, slurp_file($node->logfile, $from);
	my ($rc) = $node->psql('postgres', 'SELECT true');
	return 1 if ok($rc == 0 && !@fatal, "$what: the server comes back up");
	diag(join("\n", @fatal[ 0 .. ($#fatal < 1 ? $#fatal : 1) ]));
	done_testing();
	exit 1;
}

# 1. a backend killed with SIGKILL: the postmaster's own crash recovery
# (a session that only waits, killed as a crashing function would die)
my ($so, $se) = ('', '');
my $sleeper = IPC::Run::start([ 'psql', '-X', '-q', '-d', $node->connstr('postgres'), '-c', 'SELECT pg_sleep(600)' ],
	'>', \$so, '2>', \$se);
ki_wait($node, "SELECT count(*) = 1 FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(600)'");
my $pid = query("SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(600)'");
round("$tmp/a.jsonl", 'first');
my $from = log_size();
kill 'KILL', $pid;
eval { $sleeper->finish; };
came_back($from, 'a backend killed (SIGKILL) right after a rolled-back staged import');
is(state(), $before, '... the catalog, the imports and the staged lines are what was committed');
is(scalar(() = slurp_file($node->logfile) =~ /terminated by signal 9/g), 1, '... (it went through crash recovery)');

# 2. an immediate stop
round("$tmp/a.jsonl", 'second');
$from = log_size();
$node->stop('immediate');
$node->start(fail_ok => 1);
came_back($from, 'an immediate stop right after a rolled-back staged import, then a start');
is(state(), $before, '... the catalog, the imports and the staged lines are what was committed');

# 3. kill -9 of the postmaster; its processes end when they see it gone
my ($pm) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
my @children = split ' ', `ps -o pid= --ppid $pm`;
round("$tmp/a.jsonl", 'third');
$from = log_size();
$node->kill9;
for (1 .. 600)
{
	last unless grep { kill 0, $_ } @children;
	usleep(100_000);
}
$node->start(fail_ok => 1);
came_back($from, 'kill -9 of the postmaster right after a rolled-back staged import, then a start');
is(state(), $before, '... the catalog, the imports and the staged lines are what was committed');

# 4. lines staged by a kbench_admin and not imported yet survive a crash (the table is logged)
# (and another role's staged import, meanwhile, leaves them there)
$node->psql('postgres', "\\copy kbench_import_staging (line) FROM '$tmp/b.jsonl' $COPY_OPTS",
	extra_params => [ '-U', 'crash_admin' ]);
$node->psql('postgres', qq{\\copy kbench_import_staging (line) FROM '$tmp/a.jsonl' $COPY_OPTS
SELECT lines FROM kbench_import_catalog_staged('fourth');});
$from = log_size();
$node->stop('immediate');
$node->start(fail_ok => 1);
came_back($from, 'an immediate stop with lines staged');
is(query("SELECT count(*) FROM kbench_import_staging WHERE staged_by = 'crash_admin'"), 3000,
	"lines staged and not imported survive another role's import and the crash (a logged table)");
my ($rc, $out, $err) = $node->psql('postgres', "SELECT lines, rejected FROM kbench_import_catalog_staged('after')",
	extra_params => [ '-U', 'crash_admin' ]);
is("$out$err " . query('SELECT count(*) FROM kbench_import_staging'), '3000|0 0',
	'... and a staged import after recovery imports them (none rejected) and empties the table by DELETE');
is(query("SELECT count(*) FROM kbench_imports WHERE source LIKE '%rolled back'"), 0, 'no rolled-back import is recorded');

done_testing();
