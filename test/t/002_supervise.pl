# 002_supervise.pl: the workers' supervision of each other and of the
# processes they start (issue 24): two workers on one device
# (kernelindex.devices lists cuda:0 twice, the fake CUDA backend of
# test/fake_cuda), one restarting beside the other's long job, which keeps
# running and ends once, passed, its retry intact; a job ended by someone else
# while it runs is not overwritten by its worker; the postmaster killed with
# SIGKILL while a library implementation's child runs a long call: the worker
# and the child are gone within seconds, the cluster restarts and the job is
# not filed as passed; a library implementation that leaves a daemon (setsid
# and a double fork) leaves nothing behind; one that prints 300 MiB does not
# grow the worker's memory and its job ends with the truncated output.  Every
# wait is a bounded poll.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use KernelindexTest;
use Time::HiRes qw(usleep);

my $dir = ki_fake_cuda();
my $out = '';
IPC::Run::run([ 'cc', '-std=c11', '-O2', '-Wall', '-Wextra', '-Werror', '-fPIC', '-shared',
	"-I$KI_ROOT/kernels", '-o', "$dir/libln.so", "$KI_ROOT/test/byo/ln_lib.c", '-lm' ], '>&', \$out)
  or BAIL_OUT("the test library does not build: $out");
append_to_file("$dir/hold", '');
# the postmaster inherits these (the fake's hold file, which stops a call while it names it;
# ln_slow's sleep, in s; ln_daemon's sleeper: a number of this run's, one a failed run left
# behind does not count here)
$ENV{KBENCH_FAKE_CUDA_HOLD} = "$dir/hold";
$ENV{KB_SLOW_S} = 40;
my $daemon_s = 3000 + int(rand(1000));
$ENV{KB_DAEMON_S} = $daemon_s;
sub hold { open my $fh, '>', "$dir/hold" or die $!; print $fh @_; close $fh; }

my $node = ki_node('supervise', devices => 'cpu, cuda:0, cuda:0',
	conf => [ "kernelindex.implementation_directory = '$dir'", 'log_min_messages = log' ]);
sub query { return ki_q($node, @_); }
my $SMALL = '{"rows": 8, "hidden": 16, "dtype": "fp32"}';
ki_wait($node, "SELECT count(*) = 3 FROM kbench_workers WHERE state = 'idle' AND pid IS NOT NULL")
  or diag('the workers did not start');
query('CREATE ROLE sup_admin LOGIN; GRANT kbench_admin TO sup_admin');
for my $r ([ 'c-slow', 'ln_slow' ], [ 'c-daemon', 'ln_daemon' ], [ 'c-flood', 'ln_flood' ])
{
	my ($rrc, $o, $e) = $node->psql('kbench',
		"SELECT kbench_register_implementation('$r->[0]', 'layer_norm', 'library:$dir/libln.so:$r->[1]', '1.0')",
		extra_params => [ '-U', 'sup_admin' ]);
	fail("kbench_admin registers $r->[1]: $o$e") unless $o =~ /^sha256:/;
}
# until no process matches (pgrep -f) or at most $secs seconds: how many are left
sub left_after
{
	my ($pattern, $secs) = @_;
	for (1 .. $secs * 10)
	{
		last if `pgrep -xc -f '$pattern'` == 0;
		usleep(100_000);
	}
	my $n = `pgrep -xc -f '$pattern'`;
	chomp $n;
	return $n;
}

# ---------------------------------------------------------------- two workers on one device (defect 5)
is(query("SELECT count(*) FROM kbench_workers WHERE device = 'cuda:0' AND pid IS NOT NULL"), 2,
	'kernelindex.devices lists cuda:0 twice: two workers serve it');
# A long job with a retry runs in one of them (held in its timed calls until the test lets it go) ...
hold('time_one');
my $long = query(qq{SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', device => 'cuda:0', protocol => '$KI_TINY', retry => true)});
ki_wait_running($node, $long);
my $w1 = query("SELECT worker_pid FROM kbench_jobs WHERE id = $long");
my $retries = query("SELECT retries_left FROM kbench_jobs WHERE id = $long");
# ... while the other gets a kernel that never finishes: it times out, exits, and the postmaster starts a new one
ki_fake_mode($dir, 'hang');
my $w2 = query("SELECT pid FROM kbench_workers WHERE device = 'cuda:0' AND pid <> $w1");
my $hang = query(qq{SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', device => 'cuda:0', protocol => '$KI_TINY', timeout => '2 seconds')});
ki_wait($node, "SELECT status = 'timeout' FROM kbench_jobs WHERE id = $hang");
ki_fake_mode($dir, 'ok');
ki_wait($node, "SELECT count(*) = 1 FROM kbench_workers WHERE device = 'cuda:0' AND state = 'idle' AND pid IS NOT NULL AND pid NOT IN ($w1, $w2)")
  or diag('the sibling was not restarted');
is(query("SELECT count(*) FROM kbench_workers WHERE device = 'cuda:0' AND pid NOT IN ($w1, $w2)"), 1,
	'the sibling timed out on a kernel that never finishes, exited and was restarted beside the long job');
is(query("SELECT status || ' ' || worker_pid || ' ' || attempts || ' ' || retries_left FROM kbench_jobs WHERE id = $long"),
	"running $w1 1 $retries",
	"... its recovery left the live sibling's job alone: still running in the same worker, first attempt, retry intact");
hold('');
ki_wait_job($node, $long);
is(query("SELECT status || ' ' || worker_pid || ' ' || attempts || ' ' || retries_left FROM kbench_jobs WHERE id = $long"),
	"passed $w1 1 $retries", '... and it ends once, passed, in that worker, with its retry intact');

# A job that someone else ends while its worker runs it (as a recovery would): the worker does not overwrite it.
my $runs = query('SELECT count(*) FROM kbench_runs');
my $job = query(q{SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', device => 'cpu', protocol => '{"warmup_ms": 0, "rep_ms": 3000, "flush_bytes": 0}')});
ki_wait_running($node, $job);
query("UPDATE kbench_jobs SET status = 'failed', error = 'ended by another', finished_at = clock_timestamp() WHERE id = $job");
ki_wait($node, "SELECT count(*) = 1 FROM kbench_workers WHERE device = 'cpu' AND state = 'idle'");
is(query("SELECT status || ' ' || error FROM kbench_jobs WHERE id = $job") . ' '
	  . query("SELECT count(*) - $runs FROM kbench_runs"),
	'failed ended by another 0',
	"a job ended by another while its worker ran it keeps that end; the worker's run is not stored");
ki_has(slurp_file($node->logfile),
	"does not record the end (passed) of job $job: it is no longer this worker's attempt",
	'... and the worker logs why');

# ---------------------------------------------------------------- implementations' processes (defect 12)
$job = query("SELECT kbench_run('layer_norm', 'backward', '$SMALL', implementation => 'c-daemon', device => 'cpu', protocol => '$KI_TINY')");
ki_wait_job($node, $job);
is(query("SELECT status FROM kbench_jobs WHERE id = $job"), 'passed',
	'a library implementation that leaves a daemon (setsid, double fork) passes');
is(left_after("sleep $daemon_s", 10), 0,
	'... and the daemon is gone once the job ended (out of its process group and session)');

# 300 MiB on stdout: what the worker keeps of it is bounded.  Its memory: resident plus the
# in-memory files (memfds) it holds open, sampled while the job runs.
my $wp = query("SELECT pid FROM kbench_workers WHERE device = 'cpu'");
sub mem
{
	open my $fh, '<', "/proc/$wp/status" or return undef;
	my ($rss) = map { /^VmRSS:\s+(\d+)/ ? $1 * 1024 : () } <$fh>;
	close $fh;
	return undef unless defined $rss;
	my $files = 0;
	for my $f (glob "/proc/$wp/fd/*")
	{
		my $l = readlink($f) // '';
		$files += (-s $f // 0) if $l =~ m{^/memfd:};
	}
	return $rss + $files;
}
my $base = mem() // 0;
my $peak = $base;
$job = query("SELECT kbench_run('layer_norm', 'backward', '$SMALL', implementation => 'c-flood', device => 'cpu', protocol => '$KI_TINY')");
for (1 .. 1200)
{
	my $m = mem();
	$peak = $m if defined $m && $m > $peak;
	last if query("SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $job") eq 't';
	usleep(100_000);
}
ki_wait_job($node, $job);
note(sprintf("the worker's memory: %d MiB before, at most %d MiB while the child printed 300 MiB",
	$base >> 20, $peak >> 20));
ok($base > 0 && ($peak - $base) < (64 << 20),
	"an implementation that prints 300 MiB grows the worker's memory by less than 64 MiB");
my $err = query("SELECT status || ': ' || error FROM kbench_jobs WHERE id = $job");
ki_has($err,
	'failed: runtime_error: prepare: c-flood: ln_flood returned 1: flooded on purpose; its stderr ends: [output truncated: 314572818 bytes written, the last 1048576 kept] xxx',
	'... and its job ends with the truncated output, noted');
ok($err =~ /xx the flood is over$/, '... whose end is the end of what it printed')
  or diag(substr($err, -80));

# ---------------------------------------------------------------- the postmaster dies (defect 9)
$job = query("SELECT kbench_run('layer_norm', 'backward', '$SMALL', implementation => 'c-slow', device => 'cpu', protocol => '$KI_TINY', timeout => '10 minutes')");
ki_wait_running($node, $job);
$wp = query("SELECT worker_pid FROM kbench_jobs WHERE id = $job");
my $child = '';
for (1 .. 300)
{
	($child) = split /\n/, `pgrep -P $wp`;
	$child //= '';
	last if $child ne '';
	usleep(100_000);
}
ok($child ne '', "a library implementation's child runs a long call");
$node->kill9;
for (1 .. 300)
{
	last unless kill(0, $wp) || ($child ne '' && kill(0, $child));
	usleep(100_000);
}
is(join(' ', kill(0, $wp) ? 'worker' : '', ($child ne '' && kill(0, $child)) ? 'child' : ''), ' ',
	'the postmaster killed with SIGKILL: the orphaned worker and its child are gone within seconds');
ok($node->start(fail_ok => 1), 'the cluster restarts (no shared memory block still in use)');
ki_wait_job($node, $job);
ki_has(query("SELECT status || ': ' || error FROM kbench_jobs WHERE id = $job"),
	"failed: the worker for cpu (pid $wp) stopped while running the job",
	'... and the job is not filed as passed by the orphan: the new worker recovers it');
is(query("SELECT count(*) FROM kbench_jobs WHERE status IN ('queued', 'running')"), 0, 'nothing left queued or running');

done_testing();
