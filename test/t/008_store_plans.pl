# 008_store_plans.pl: the store keeps its plans (issue 31 item 2) and they
# follow the catalog.  The kinds' store functions are plpgsql with a generic
# plan (a LANGUAGE sql function with SET clauses is planned at every call);
# the statements store.c keeps (SPI_keepplan) in the worker are re-planned
# when the functions they call are replaced (CREATE OR REPLACE, as ALTER
# EXTENSION UPDATE does) or dropped and made again (DROP and CREATE
# EXTENSION): the worker's next jobs are stored, not "cache lookup failed".
# And the worker reports its transactions' table statistics.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use KernelindexTest;

my $node = ki_node('store', devices => 'cpu');

is( ki_q($node,
		"SELECT string_agg(p.proname, ',' ORDER BY p.proname) FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang"
		  . " WHERE p.pronamespace = '_kernelindex'::regnamespace AND p.proname ~ '^store_(operations|projects|workloads|implementations|protocols|environments|serving|runs)\$'"
		  . " AND l.lanname = 'plpgsql' AND 'plan_cache_mode=force_generic_plan' = ANY (p.proconfig)"),
	'store_environments,store_implementations,store_operations,store_projects,store_protocols,store_runs,store_serving,store_workloads',
	'the eight store functions are plpgsql with a generic plan');

sub job_passes
{
	my ($what) = @_;
	my $job = ki_q($node, "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}', protocol => '$KI_TINY')");
	ki_wait_job($node, $job);
	is(ki_q($node, "SELECT status || ' ' || (run_digest IN (SELECT digest FROM kbench_runs)) FROM kbench_jobs WHERE id = $job"),
		'passed true', $what);
}

job_passes('a job is stored');
job_passes('a second job is stored (the kept plans)');

# what the worker's transactions did reaches the cumulative statistics (so
# autovacuum analyzes and vacuums what it stores): only the worker inserts runs
ok( $node->poll_query_until($node->{_ki_database} // 'kbench',
		"SELECT n_tup_ins >= 2 FROM pg_stat_user_tables WHERE relid = 'kbench_runs'::regclass"),
	"the worker's two stored runs are counted in pg_stat_user_tables");
ok( $node->poll_query_until($node->{_ki_database} // 'kbench',
		"SELECT n_tup_upd >= 4 FROM pg_stat_user_tables WHERE relid = 'kbench_jobs'::regclass"),
	"and its claims and ends of the two jobs (updates of kbench_jobs)");

# the functions replaced, as an update replaces them (same OIDs, new bodies)
my $def = ki_q($node, "SELECT pg_get_functiondef('_kernelindex.store_runs(text[], jsonb[], text[], text[])'::regprocedure)");
ki_q($node, $def);
job_passes('a job is stored after store_runs was replaced');

# the extension dropped and made again: every function has a new OID
ki_q($node, 'DROP EXTENSION kernelindex CASCADE');
ki_q($node, 'CREATE EXTENSION kernelindex');
job_passes('a job is stored after DROP and CREATE EXTENSION (the worker re-plans what it kept)');

done_testing();
