# 001_runner.pl: the background workers on a real server with the library
# preloaded: NOTIFY on completion, 200 jobs from 4 concurrent sessions each
# run exactly once, a worker killed with SIGKILL mid-job, a retried job, a
# server restart mid-job, a job past its timeout, cancelling a running job,
# and a cancelled wait (statement_timeout) cancelling its job.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use KernelindexTest;

my $node = ki_node('runner', devices => 'cpu');
my $LONG = '{"warmup_ms": 0, "rep_ms": 20000, "flush_bytes": 0, "max_samples": 100000000}';
my $MID = '{"warmup_ms": 0, "rep_ms": 3000, "flush_bytes": 0}';
my $BIG = '{"rows": 2048, "hidden": 2048, "dtype": "fp32"}';
sub query { return ki_q($node, @_); }

# SIGKILL the worker running a job, once the job is running; a job that never
# ran (or ran without a pid) is a failed check that shows the job's row, not
# a die on an empty pid that says nothing (a pg18 run once died here)
sub kill_worker_of
{
	my ($job, $what) = @_;
	my $pid = ki_wait_running($node, $job) ? query("SELECT worker_pid FROM kbench_jobs WHERE id = $job") : '';
	if ($pid !~ /^[0-9]+$/)
	{
		fail("$what: job $job was running under a worker");
		diag(query("SELECT format('%s attempts %s pid %s error %s', status, attempts, worker_pid, error) FROM kbench_jobs WHERE id = $job"));
		return 0;
	}
	kill 'KILL', $pid;
	return 1;
}

ki_wait($node, "SELECT count(*) = 1 FROM kbench_workers WHERE state = 'idle'")
  or diag('the worker did not start');

# NOTIFY kbench_jobs when a job finishes (no payload: every role may LISTEN,
# and a job id is its owner's business)
my ($rc, $out, $err) = $node->psql('kbench', qq{LISTEN kbench_jobs;
CALL kbench_bench('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', protocol => '$KI_TINY');
SELECT 1;});
ki_has("$out\n$err", 'Asynchronous notification "kbench_jobs" received',
	'NOTIFY kbench_jobs on completion');

# 200 jobs from 4 concurrent sessions: each runs exactly once
my $runs_before = query('SELECT count(*) FROM kbench_runs');
my @sessions;
for my $s (1 .. 4)
{
	my $sql = "SELECT kbench_run('layer_norm', 'forward', jsonb_build_object('rows', 8 + g % 5, 'hidden', 8 * $s), protocol => '$KI_TINY') FROM generate_series(1, 50) g";
	my ($o, $e) = ('', '');
	push @sessions,
	  IPC::Run::start([ 'psql', '-X', '-q', '-d', $node->connstr('kbench'), '-c', $sql ],
		'>', \$o, '2>', \$e);
}
$_->finish for @sessions;
if (ki_wait($node, "SELECT count(*) = 0 FROM kbench_jobs WHERE status IN ('queued', 'running')"))
{
	is(query('SELECT count(*) FROM kbench_jobs WHERE id > 1'), 200, '200 jobs queued by 4 concurrent sessions');
	is(query("SELECT count(*) FROM kbench_jobs WHERE id > 1 AND status = 'passed' AND attempts = 1"),
		200, 'each of the 200 jobs ran exactly once and passed');
	is(query('SELECT count(DISTINCT run_digest) FROM kbench_jobs WHERE id > 1'), 200, '200 distinct runs recorded');
	is(query("SELECT count(*) - $runs_before FROM kbench_runs"), 200, '200 runs in the catalog');
	# the worker stores kb_run's manifests under the digests kb_run gave them (validated once, in
	# kb_run; src/worker_jobs.c): each must be its manifest's digest, and the job's run must be there
	is( query(q{SELECT count(*) FILTER (WHERE kbench_digest(m.manifest) IS DISTINCT FROM m.digest) || ' ' || (count(*) > 200)::int
	   FROM (SELECT r.digest, r.manifest FROM kbench_runs r JOIN kbench_jobs j ON j.run_digest = r.digest
	         UNION ALL SELECT p.digest, p.manifest FROM kbench_protocols p WHERE p.source = 'kbench'
	         UNION ALL SELECT e.digest, e.manifest FROM kbench_environments e WHERE e.source = 'kbench'
	         UNION ALL SELECT w.digest, w.manifest FROM kbench_workloads w WHERE w.source = 'kbench'
	         UNION ALL SELECT i.digest, i.manifest FROM kbench_implementations i WHERE i.source = 'kbench'
	         UNION ALL SELECT o.digest, o.manifest FROM kbench_operations o WHERE o.source = 'kbench') m}),
		'0 1',
		"every manifest a job stored digests to its key (the worker takes kb_run's validated manifests and digests)");
	is( query(q{SELECT count(*) FROM kbench_jobs j WHERE j.id > 1 AND NOT EXISTS (SELECT 1 FROM kbench_runs r WHERE r.digest = j.run_digest
	   AND r.raw_samples_ns IS NOT NULL AND cardinality(r.unresolved) = 0)}),
		0, "each job's run is stored with its raw samples and nothing unresolved");
	note(query(q{SELECT format('queue-to-start p50 %s ms, p99 %s ms; run p50 %s ms',
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - queued_at) * 1000)::numeric, 1),
	   round(percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - queued_at) * 1000)::numeric, 1),
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - started_at) * 1000)::numeric, 1))
	   FROM kbench_jobs WHERE id > 1}));
}
else
{
	fail('200 jobs from 4 sessions finished');
}

# SIGKILL of the worker mid-job: the job is failed with the reason
my $job = query("SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$LONG')");
if (kill_worker_of($job, 'SIGKILL mid-job'))
{
	if (ki_wait($node, "SELECT status <> 'running' FROM kbench_jobs WHERE id = $job"))
	{
		is(query("SELECT status FROM kbench_jobs WHERE id = $job"), 'failed', 'a job whose worker was killed is marked failed');
		ki_has(query("SELECT error FROM kbench_jobs WHERE id = $job"),
			'stopped while running the job: it was killed or the server restarted', 'the failure says why');
	}
	else
	{
		fail("the killed worker's job left running");
	}
}
is(query("SELECT count(*) FROM kbench_jobs WHERE status = 'running'"), 0, 'no job left running after the crash');

# a job that asked for one retry is re-queued after a kill, and then runs
ki_wait($node, "SELECT count(*) = 1 FROM kbench_workers WHERE state = 'idle'");
$job = query("SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$MID', retry => true)");
kill_worker_of($job, 'a retried job');
ki_wait($node, "SELECT status IN ('passed', 'failed') FROM kbench_jobs WHERE id = $job");
is(query("SELECT status || ' ' || attempts FROM kbench_jobs WHERE id = $job"), 'passed 2',
	'a retried job runs again after its worker was killed');

# a server restart mid-job re-queues it (fast shutdown) and it runs after
$job = query("SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$MID')");
ki_wait_running($node, $job);
$node->restart;
ki_wait($node, "SELECT status IN ('passed', 'failed') FROM kbench_jobs WHERE id = $job");
is(query("SELECT status || ' ' || attempts FROM kbench_jobs WHERE id = $job"), 'passed 2',
	'a job interrupted by a server restart is re-queued and runs');

# timeout
$job = query("SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$LONG', timeout => '1 second')");
ki_wait_job($node, $job);
is(query("SELECT status FROM kbench_jobs WHERE id = $job"), 'timeout', 'a job past its timeout is stopped and marked timeout');
is(query("SELECT run_status FROM kbench_jobs WHERE id = $job"), 'timeout', 'its run is recorded with status timeout');
is(query("SELECT finished_at - started_at < interval '1 s' + interval '2 s' FROM kbench_jobs WHERE id = $job"),
	't', 'stopped within 2 s of the 1 s timeout');

# cancel a running job
$job = query("SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$LONG')");
ki_wait_running($node, $job);
is(query("SELECT kbench_cancel($job)"), 't', 'kbench_cancel accepts a running job');
ki_wait($node, "SELECT status <> 'running' FROM kbench_jobs WHERE id = $job");
is(query("SELECT status FROM kbench_jobs WHERE id = $job"), 'canceled', 'a cancelled running job stops and is marked canceled');

# cancelling the waiting statement cancels the job
($rc, $out, $err) = $node->psql('kbench', qq{SET statement_timeout = '2s';
CALL kbench_bench('layer_norm', 'backward', '$BIG', protocol => '$LONG');});
ki_has($err, 'canceling statement due to statement timeout', 'statement_timeout cancels the wait');
$job = query('SELECT max(id) FROM kbench_jobs');
ki_wait_job($node, $job);
is(query("SELECT status FROM kbench_jobs WHERE id = $job"), 'canceled', '... and the job with it');
is(query("SELECT count(*) FROM kbench_jobs WHERE status IN ('queued', 'running')"), 0, 'nothing left queued or running');

done_testing();
