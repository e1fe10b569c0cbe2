# 004_fault.pl: the CUDA fault paths of the worker on a host without a GPU,
# through the fake CUDA backend of test/fake_cuda (its behaviour chosen by
# its mode file, read at every open): a server whose only worker serves
# cuda:0.  A fault fails the job with the CUDA message and the worker goes on;
# too little memory is refused before allocating; a kernel that never
# finishes ends as timeout and the worker is replaced, also when the backend
# itself never returns.  (The kbench CLI under the same faults, and
# bench/device.sh on the fake device, are test/suites/fault.sh.)
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use KernelindexTest;

my $fake = ki_fake_cuda(log => 1);
my $node = ki_node('fault', devices => 'cuda:0');
sub query { return ki_q($node, @_); }
sub calls { return scalar(() = slurp_file("$fake/calls.log") =~ /$_[0]/gm); }
sub clear_calls { open my $fh, '>', "$fake/calls.log" or die $!; close $fh; }
# queue a layer_norm job on cuda:0 in mode $mode (timeout $timeout, default the GUC's); its id
sub job
{
	my ($mode, $timeout) = @_;
	ki_fake_mode($fake, $mode);
	return query(qq{SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', device => 'cuda:0',
	   protocol => '$KI_TINY'} . (defined $timeout ? ", timeout => '$timeout'" : '') . ')');
}
sub idle_worker
{
	my ($not) = @_;
	return ki_wait($node, "SELECT count(*) = 1 FROM kbench_workers WHERE state = 'idle' AND pid IS NOT NULL AND pid <> $not");
}
sub worker_pid { return query('SELECT pid FROM kbench_workers'); }

idle_worker(0) or diag('the worker did not start');
is(query("SELECT device || ' | ' || product FROM kbench_workers"), 'cuda:0 | Fake GPU (kernelindex test double)',
	'kbench_workers shows the fake device');

my $j = job('ok');
ki_wait_job($node, $j);
is(query("SELECT status || ' ' || run_status FROM kbench_jobs WHERE id = $j"), 'passed passed', 'a job on the fake device passes');

# A kernel variant asked for by name from SQL, on the GPU worker: filed under its own implementation.
ki_fake_mode($fake, 'ok');
for my $impl ('cuda', 'cuda/v2')
{
	$j = query(qq{SELECT kbench_run('layer_norm', 'backward', '{"rows": 8, "hidden": 8}', implementation => '$impl',
	   device => 'cuda:0', protocol => '$KI_TINY')});
	ki_wait_job($node, $j);
	my $v2 = $impl eq 'cuda' ? '' : 'v2';
	is( query(qq{SELECT j.status || ' ' || i.name || ' ' || (i.manifest->'spec'->'callable'->>'symbol') FROM kbench_jobs j
	   JOIN kbench_runs r ON r.digest = j.run_digest JOIN kbench_implementations i ON i.digest = r.implementation_digest
	   WHERE j.id = $j}),
		'passed kbench-layer-norm-cuda' . ($v2 ? '-v2' : '') . ' layer_norm_cuda' . ($v2 ? '/v2' : ''),
		"kbench_run(implementation => '$impl') on cuda:0 goes to the GPU worker and files the run under ${impl}'s implementation (the fake runs the CPU code: no CUDA kernel runs here)");
}
is(query(q{SELECT string_agg(operation || ' ' || implementations::text, '; ' ORDER BY operation) FROM kbench_device_operations WHERE implementation IS NOT NULL}),
	'distill_jsd_loss {cuda,cuda/v2}; jsd {cuda}; layer_norm {cuda,cuda/v2}; megatron_cross_entropy {cuda,cuda/v2}',
	"kbench_device_operations lists each operation's kernel variants for the GPU worker");
my (undef, undef, $err) = $node->psql('kbench',
	q{SELECT kbench_run('jsd', 'forward', '{"tokens": 8, "vocab": 8}', implementation => 'cuda/v2', device => 'cuda:0')});
my ($first) = split /\n/, $err;
$first =~ s/^psql:<stdin>:\d+: //;
is($first, "ERROR:  cannot queue jsd forward: unknown variant 'v2' for jsd; allowed: v1",
	'an unknown variant is refused when queued');

$j = job('fault_call');
ki_wait_job($node, $j);
my $pid = query("SELECT worker_pid FROM kbench_jobs WHERE id = $j");
is(query("SELECT status || ' ' || run_status FROM kbench_jobs WHERE id = $j"), 'failed runtime_error',
	'a kernel fault fails the job, run_status runtime_error');
is(query("SELECT error FROM kbench_jobs WHERE id = $j"),
	'runtime_error: prepare: cudaErrorIllegalAddress (an illegal memory access was encountered) at fake_cuda.c: layer_norm_cuda',
	"... its error names runtime_error and CUDA's message");
is(query("SELECT r.status FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $j"), 'runtime_error',
	'... and its run is stored with status runtime_error (docs/SQL.md: the run is in kbench_runs either way)');
$j = job('ok');
ki_wait_job($node, $j);
is(query("SELECT status || ' ' || worker_pid FROM kbench_jobs WHERE id = $j"), "passed $pid",
	'the next job runs in the same worker (the sticky error is reset at the next open)');

$j = job('fault_sync');
ki_wait_job($node, $j);
is( query("SELECT status || ' ' || run_status || ' ' || (error LIKE 'runtime_error: prepare: %an illegal memory access was encountered%') FROM kbench_jobs WHERE id = $j"),
	'failed runtime_error true', 'a fault that surfaces at the wait fails the job the same way');

$j = job('fault_open');
ki_wait_job($node, $j);
is(query("SELECT status || ' ' || coalesce(run_status::text, 'no run') FROM kbench_jobs WHERE id = $j"), 'failed no run',
	'a device that cannot be opened fails the job without a run');
is(query("SELECT error LIKE 'device_unavailable: cuda:0 is not available: cudaErrorDevicesUnavailable%' FROM kbench_jobs WHERE id = $j"),
	't', "... with CUDA's words");

clear_calls();
$j = job('nomem');
ki_wait_job($node, $j);
is(query("SELECT status || ' ' || run_status FROM kbench_jobs WHERE id = $j"), 'failed resource_exceeded',
	'too little device memory: resource_exceeded');
is(query("SELECT error FROM kbench_jobs WHERE id = $j"),
	'resource_exceeded: workload needs 0.06 GiB on cuda:0, which has 0.00 GiB free of 16.00 GiB', '... saying what was needed');
is(calls(' alloc'), 0, '... refused before allocating anything');

# A kernel that never finishes; the backend keeps its promise and times out.
clear_calls();
$pid = worker_pid();
$j = job('hang', '3 seconds');
ki_wait_job($node, $j);
is(query("SELECT status || ' ' || run_status FROM kbench_jobs WHERE id = $j"), 'timeout timeout',
	'a kernel that never finishes: the job ends as timeout, its run recorded');
is(query("SELECT error FROM kbench_jobs WHERE id = $j"),
	'stopped after the job\'s timeout of 3 s (prepare: the device did not finish within 3 s)', '... saying where it stopped');
is(query("SELECT finished_at - started_at < interval '3 s' + interval '3 s' FROM kbench_jobs WHERE id = $j"), 't',
	'... within seconds of its timeout');
is(calls('blocked forever'), 0, '... without waiting for the device after the timeout');
idle_worker($pid) or diag('no new worker');
is(query("SELECT pid <> $pid FROM kbench_workers"), 't', 'the worker exits after the timeout and a new one starts');
$j = job('ok');
ki_wait_job($node, $j);
is(query("SELECT status FROM kbench_jobs WHERE id = $j"), 'passed', '... and runs the next job');

# The worst case: the backend's wait itself never returns.  The watchdog.
$pid = worker_pid();
$j = job('hang_forever', '2 seconds');
ki_wait_job($node, $j);
is(query("SELECT status || ' ' || coalesce(run_status::text, 'no run') FROM kbench_jobs WHERE id = $j"), 'timeout no run',
	'a backend that never returns: the job ends as timeout');
is(query("SELECT error FROM kbench_jobs WHERE id = $j"),
	"stopped after the job's timeout of 00:00:02: the device did not return, and the worker for cuda:0 (pid $pid) was restarted",
	'... saying why');
is(query("SELECT finished_at - started_at < interval '2 s' + interval '10 s' FROM kbench_jobs WHERE id = $j"), 't',
	"... within seconds of its timeout (the watchdog's grace is 5 s)");
idle_worker($pid) or diag('no new worker');
$j = job('ok');
ki_wait_job($node, $j);
is(query("SELECT status FROM kbench_jobs WHERE id = $j") . ' ' . query("SELECT pid <> $pid FROM kbench_workers"), 'passed t',
	'a new worker runs the next job');
is(query("SELECT count(*) FROM kbench_jobs WHERE status IN ('queued', 'running')"), 0, 'nothing left queued or running');

done_testing();
