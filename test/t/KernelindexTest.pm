# KernelindexTest.pm: what the server tests of test/t share (docs/TESTING.md,
# "Server tests in Perl").  Each test says
#
#   use FindBin;
#   use lib $FindBin::RealBin;
#   use PostgreSQL::Test::Cluster;
#   use PostgreSQL::Test::Utils;
#   use Test::More;
#   use KernelindexTest;
#
# and gets:
#
#   ki_node(NAME, devices => 'cpu', conf => [LINES], ...)
#       a node of PostgreSQL::Test::Cluster, started, with the library
#       preloaded (shared_preload_libraries = kernelindex), a database kbench
#       served by the workers (kernelindex.devices) and the extension created
#       there.  preload => 0: a plain node (no library, no workers; the
#       extension in database postgres unless database => NAME says
#       otherwise).  allows_streaming => 1: a primary for a standby.
#       restart_after_crash is on (PostgreSQL::Test::Cluster turns it off):
#       a worker killed with SIGKILL must not take the server down.
#   ki_fake_cuda(mode => 'ok', log => 1)
#       the fake CUDA backend of test/fake_cuda, built (make -C kernels
#       fake-cuda, where this user may write kernels/) and copied into a
#       temporary folder with its mode file (and calls.log with log => 1,
#       KBENCH_FAKE_CUDA_LOG); sets KBENCH_CUDA_LIB and KBENCH_FAKE_CUDA=@mode for the servers
#       started after it (the postmaster inherits them).  Returns the folder;
#       ki_fake_mode(DIR, MODE) changes the mode the next open reads.
#   ki_q(NODE, SQL)            one query on the node's database (kbench, or
#                              postgres without the preload; dies on an error)
#   ki_wait(NODE, SQL)         poll a boolean query there until true
#                              (poll_query_until: at most 180 s,
#                              PG_TEST_TIMEOUT_DEFAULT); false if never
#   ki_wait_job(NODE, ID)      until job ID is neither queued nor running
#   ki_wait_running(NODE, ID)  until job ID is running
#   $KI_TINY                   the smallest protocol (3 samples, no warmup)
#   $KI_ROOT                   the repository's root
#   ki_has(GOT, TEXT, WHAT)    ok when GOT contains TEXT (shows GOT if not)
package KernelindexTest;

use strict;
use warnings FATAL => 'all';

use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Copy qw(copy);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use parent 'Exporter';
our @EXPORT = qw(ki_node ki_fake_cuda ki_fake_mode ki_q ki_wait ki_wait_job
  ki_wait_running ki_has $KI_TINY $KI_ROOT);

our $KI_ROOT = abs_path(dirname(__FILE__) . '/../..');
our $KI_TINY =
  '{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3}';

sub ki_node
{
	my ($name, %o) = @_;
	my $preload = $o{preload} // 1;
	my $db = $o{database} // ($preload ? 'kbench' : 'postgres');
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(allows_streaming => $o{allows_streaming} // 0);
	my @conf = ('restart_after_crash = on');
	# allows_streaming's 1 MB of shared buffers and 10 connections are too
	# few for the Liger import and the workers beside the test's sessions
	push @conf, 'shared_buffers = 128MB', 'max_connections = 40'
	  if $o{allows_streaming};
	if ($preload)
	{
		push @conf, "shared_preload_libraries = 'kernelindex'",
		  "kernelindex.database = '$db'",
		  "kernelindex.devices = '" . ($o{devices} // 'cpu') . "'";
	}
	push @conf, @{ $o{conf} // [] };
	$node->append_conf('postgresql.conf', join("\n", @conf) . "\n");
	$node->start;
	$node->{_ki_database} = $db;
	$node->safe_psql('postgres', "CREATE DATABASE $db") if $db ne 'postgres';
	$node->safe_psql($db, 'CREATE EXTENSION kernelindex')
	  unless defined $o{extension} && !$o{extension};
	return $node;
}

sub ki_fake_cuda
{
	my (%o) = @_;
	my $so = "$KI_ROOT/kernels/build/libkbench_fake_cuda.so";
	# built here when this user may write kernels/ (bin/test.sh builds it
	# first as root, whose checkout the postgres user only reads)
	if (-w "$KI_ROOT/kernels" && (!-e "$KI_ROOT/kernels/build" || -w "$KI_ROOT/kernels/build"))
	{
		my $out = '';
		IPC::Run::run([ 'make', '-s', '-C', "$KI_ROOT/kernels", 'NVCC=', 'fake-cuda' ], '>&', \$out)
		  or BAIL_OUT("the fake CUDA backend does not build: $out");
	}
	-f $so or BAIL_OUT("no $so: make -C kernels fake-cuda builds it");
	my $dir = PostgreSQL::Test::Utils::tempdir('fake_cuda');
	copy($so, $dir)
	  or BAIL_OUT("cannot copy the fake CUDA backend: $!");
	ki_fake_mode($dir, $o{mode} // 'ok');
	$ENV{KBENCH_CUDA_LIB} = "$dir/libkbench_fake_cuda.so";
	$ENV{KBENCH_FAKE_CUDA} = "\@$dir/mode";
	if ($o{log})
	{
		append_to_file("$dir/calls.log", '');
		$ENV{KBENCH_FAKE_CUDA_LOG} = "$dir/calls.log";
	}
	return $dir;
}

sub ki_fake_mode
{
	my ($dir, $mode) = @_;
	open my $fh, '>', "$dir/mode" or die "$dir/mode: $!";
	print $fh "$mode\n";
	close $fh;
	return;
}

sub ki_q
{
	my ($node, $sql, %params) = @_;
	return $node->safe_psql($node->{_ki_database} // 'kbench', $sql, %params);
}

sub ki_wait
{
	my ($node, $sql) = @_;
	return $node->poll_query_until($node->{_ki_database} // 'kbench', $sql);
}

sub ki_wait_job
{
	my ($node, $job) = @_;
	return ki_wait($node,
		"SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $job");
}

sub ki_wait_running
{
	my ($node, $job) = @_;
	return ki_wait($node,
		"SELECT status = 'running' FROM kbench_jobs WHERE id = $job");
}

sub ki_has
{
	my ($got, $text, $what) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $ok = ok(index($got // '', $text) >= 0, $what);
	diag(substr($got // '(undef)', 0, 600)) unless $ok;
	return $ok;
}

1;
