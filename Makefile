# kernelindex: PGXS build of the extension.  The identity core (core/)
# and the kernels library (kernels/, its own Makefile, no PostgreSQL) are
# plain C shared with the kbench CLI.
EXTENSION = kernelindex
# The version is written once, in kernelindex.control.
EXTVERSION := $(shell sed -n "s/^default_version *= *'\\(.*\\)'/\\1/p" kernelindex.control)
MODULE_big = kernelindex

# The identity core (core/) comes in kernels/libkbench.a, built once by
# core/Makefile; the Liger mapping and the extension are compiled here.
LIGER_SRCS = $(sort $(wildcard src/liger/*.c))
EXT_SRCS = $(sort $(wildcard src/*.c))
OBJS = $(LIGER_SRCS:.c=.o) $(EXT_SRCS:.c=.o)

# The SQL as TimescaleDB ships it (docs/UPGRADES.md):
#   sql/prelude/*.sql  the few functions a table, index or seed row of the
#                      schema calls (CREATE OR REPLACE), run before it;
#   sql/schema/*.sql   what runs once, at install: roles, types, tables,
#                      sequences, indexes, seed rows;
#   sql/code/*.sql     re-runnable (CREATE OR REPLACE), by subject:
#                      functions, views, triggers, policies, grants;
#   sql/updates/A--B.sql  one modfile per release: what code cannot say
#                      (new tables and columns, renames, data migrations, DROPs).
# The install script is prelude + schema + code; for every earlier release
# X, kernelindex--X--VERSION.sql is prelude + the modfiles from X on, in
# order, + code.  All generated here; nothing under sql/ is a link or a copy.
SQL_PRELUDE = $(sort $(wildcard sql/prelude/*.sql))
SQL_SCHEMA = $(sort $(wildcard sql/schema/*.sql))
SQL_CODE = $(sort $(wildcard sql/code/*.sql))
SQL_MODFILES = $(shell ls sql/updates/*--*.sql 2>/dev/null | sort -V)
# the releases an update starts from: the A of every modfile A--B
SQL_RELEASED = $(foreach m,$(SQL_MODFILES),$(firstword $(subst --, ,$(notdir $(m)))))
UPDATE_SCRIPTS = $(foreach v,$(SQL_RELEASED),sql/$(EXTENSION)--$(v)--$(EXTVERSION).sql)
DATA_built = sql/$(EXTENSION)--$(EXTVERSION).sql $(UPDATE_SCRIPTS)

PG_CONFIG ?= pg_config
PG_CPPFLAGS = -Isrc -Icore -isystem $(shell $(PG_CONFIG) --includedir-server) -std=c11 -D_GNU_SOURCE \
	-DKI_VERSION='"$(EXTVERSION)"'
PG_CFLAGS = -Wall -Wextra -Werror
# The kernels library (kernels/, plain C, its own Makefile).  The CUDA part
# is a separate libkbench_cuda.so that the kernels library dlopen()s only
# when a job names a GPU; it is installed beside kernelindex.so.
KBENCH_LIB = kernels/libkbench.a
SHLIB_LINK = $(KBENCH_LIB) -lcrypto -lzstd -lm -ldl -lpthread

# `make installcheck` needs nothing prepared: like pg_cron it starts a
# temporary instance of the installed server (--temp-instance) with the
# library preloaded (--temp-config, test/regress.conf).  Run it as a user
# PostgreSQL accepts (bin/test.sh runs it as postgres when it is root).
# pg_regress reads its inputs where PostgreSQL's modules keep them:
# sql/T.sql and expected/T.out at the top (sql/'s folders and the generated
# kernelindex--*.sql are the extension's own SQL, not tests); what it
# writes (results/, regression.diffs, the temporary instance) goes under
# test/, out of the top level.
REGRESS = $(patsubst sql/%.sql,%,$(sort $(filter-out sql/$(EXTENSION)--%,$(wildcard sql/*.sql))))
REGRESS_OPTS = --inputdir=. --outputdir=test --load-extension=$(EXTENSION) \
	--temp-config=test/regress.conf --temp-instance=test/tmp_check

# The isolation specs (specs/T.spec, expected/T.out) have an instance of
# their own, test/isolation.conf: the worker serves their database, and the
# queue limits are small.
ISOLATION = $(patsubst specs/%.spec,%,$(sort $(wildcard specs/*.spec)))
ISOLATION_OPTS = --inputdir=. --outputdir=test/isolation_output --load-extension=$(EXTENSION) \
	--temp-config=test/isolation.conf --temp-instance=test/tmp_check_isolation

# The server tests (test/t/NNN_name.pl, Perl on PostgreSQL::Test::Cluster, as
# PostgreSQL's own modules test theirs): `make prove_installcheck`, or with
# PROVE_TESTS=test/t/NNN_name.pl one of them, PROVE_FLAGS=-v every TAP line.
# Each starts the servers it needs from the installed PostgreSQL (pg_config's
# bindir, first on PATH); their data and logs go to test/t/tmp_check.  Like
# installcheck, they run as a user PostgreSQL accepts (not root).
TAP_TESTS = 1

EXTRA_CLEAN = $(EXTENSION)-$(EXTVERSION).zip test/results test/regression.diffs test/regression.out test/isolation_output \
	test/tmp_check test/tmp_check_isolation test/log test/t/tmp_check

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# (after PGXS, which sets them empty)
PROVE_TESTS = $(sort $(wildcard test/t/[0-9][0-9][0-9]_*.pl))
PROVE_FLAGS = --timer
# PGXS's prove_installcheck, with the tests' scratch folder (TESTDIR's
# tmp_check) in test/t rather than in the repository's root, which the
# postgres user may not write when root runs the tests.
define prove_installcheck
rm -rf '$(CURDIR)'/test/t/tmp_check && \
$(MKDIR_P) '$(CURDIR)'/test/t/tmp_check && \
cd $(srcdir) && \
   TESTDIR='$(CURDIR)/test/t' PATH="$(bindir):$(CURDIR):$$PATH" \
   TESTLOGDIR='$(CURDIR)/test/t/tmp_check/log' TESTDATADIR='$(CURDIR)/test/t/tmp_check' \
   PGPORT='6$(DEF_PGPORT)' \
   PG_REGRESS='$(top_builddir)/src/test/regress/pg_regress' \
   $(PROVE) $(PG_PROVE_FLAGS) $(PROVE_FLAGS) $(PROVE_TESTS)
endef
.PHONY: prove_installcheck
prove_installcheck:
	$(prove_installcheck)

$(OBJS): kernelindex.control core/ki_json.h core/ki_schema.h src/kernelindex.h src/store.h src/runner.h src/estimate.h src/catalog_import.h src/import.h src/ingest.h $(wildcard src/liger/*.h) kernels/kbench.h

# The install script: prelude, schema, code.
sql/$(EXTENSION)--$(EXTVERSION).sql: $(SQL_PRELUDE) $(SQL_SCHEMA) $(SQL_CODE) kernelindex.control
	{ echo '-- kernelindex $(EXTVERSION) install script, generated by the Makefile from sql/prelude, sql/schema and sql/code.'; \
	  printf '%s\n' '\echo Use "CREATE EXTENSION $(EXTENSION)" to load this file. \quit'; \
	  cat $(SQL_PRELUDE) $(SQL_SCHEMA) $(SQL_CODE); } > $@

# The update script from release X: prelude, the modfiles X--Y, Y--Z, ...
# up to this version, in order, then the code.
sql/$(EXTENSION)--%--$(EXTVERSION).sql: $(SQL_PRELUDE) $(SQL_MODFILES) $(SQL_CODE) kernelindex.control
	{ echo '-- kernelindex update script $*--$(EXTVERSION), generated by the Makefile from sql/prelude, sql/updates and sql/code.'; \
	  printf '%s\n' '\echo Use "ALTER EXTENSION $(EXTENSION) UPDATE TO '"'"'$(EXTVERSION)'"'"'" to load this file. \quit'; \
	  cat $(SQL_PRELUDE); v='$*'; \
	  while [ "$$v" != '$(EXTVERSION)' ]; do \
	    m=$$(ls sql/updates/$$v--*.sql 2>/dev/null); \
	    [ $$(echo "$$m" | wc -w) = 1 ] || { echo "no single modfile from $$v in sql/updates: '$$m'" >&2; exit 1; }; \
	    cat "$$m"; v=$$(basename "$$m" .sql); v=$${v#*--}; \
	  done; \
	  cat $(SQL_CODE); } > $@.tmp && mv $@.tmp $@

$(shlib): $(KBENCH_LIB)

.PHONY: kbench
$(KBENCH_LIB): kbench
kbench:
	$(MAKE) -C kernels

install: install-kbench-cuda install-kbench-python install-kbench-bin
# The command line tools: the programs in pkglibdir beside libkbench_cuda.so and
# kernelindex_python/ (which they find through their own real path,
# kernels/host.c kb_object_dir), and a link to each in PostgreSQL's bindir
# (`pg_config --bindir`), on PATH wherever the server's programs are.
.PHONY: install-kbench-bin
install-kbench-bin:
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	for p in kbench kbench-agent; do \
		if [ -f kernels/$$p ]; then \
			$(INSTALL_PROGRAM) kernels/$$p '$(DESTDIR)$(pkglibdir)/'$$p && \
			rm -f '$(DESTDIR)$(bindir)/'$$p && ln -s '$(pkglibdir)/'$$p '$(DESTDIR)$(bindir)/'$$p || exit 1; \
		fi; \
	done
# The python harness and the built-in python implementations, beside
# kernelindex.so where libkbench looks for them (kernels/impl_python.c).
.PHONY: install-kbench-python
install-kbench-python:
	$(MKDIR_P) '$(DESTDIR)$(pkglibdir)/kernelindex_python'
	$(INSTALL_DATA) kernels/python/kbench_harness.py kernels/python/kbench_builtin.py kernels/python/kbench_builtin_defs.py kernels/python/kbench_providers.py kernels/python/kbench_reference.py '$(DESTDIR)$(pkglibdir)/kernelindex_python/'

.PHONY: install-kbench-cuda
install-kbench-cuda:
	if [ -f kernels/libkbench_cuda.so ]; then \
		$(INSTALL_SHLIB) kernels/libkbench_cuda.so '$(DESTDIR)$(pkglibdir)/libkbench_cuda.so'; fi

uninstall: uninstall-kbench-bin
.PHONY: uninstall-kbench-bin
uninstall-kbench-bin:
	rm -f '$(DESTDIR)$(bindir)/kbench' '$(DESTDIR)$(bindir)/kbench-agent' \
		'$(DESTDIR)$(pkglibdir)/kbench' '$(DESTDIR)$(pkglibdir)/kbench-agent'

# `make dist`: the PGXN release archive, kernelindex-VERSION.zip, of the committed
# tree (git archive of HEAD, or of the working tree's tracked changes when there are
# some: git stash create; in a copy without .git, such as test/mutate.sh's, the files
# .gitignore does not ignore).  It holds the sources only; it builds with `make` and
# `make install` where PostgreSQL's PGXS is (test/suites/packaging.sh builds one in a
# temporary folder).  The version is META.json's, which must equal kernelindex.control's.
DIST = $(EXTENSION)-$(EXTVERSION)
.PHONY: dist
dist:
	@v=$$(sed -n 's/^   "version": "\(.*\)",$$/\1/p' META.json); [ "$$v" = '$(EXTVERSION)' ] || \
		{ echo "META.json says version $$v, kernelindex.control $(EXTVERSION)" >&2; exit 1; }
	if [ -e .git ]; then \
		rev=$$(git stash create); git archive --format=zip --prefix=$(DIST)/ -o $(DIST).zip $${rev:-HEAD}; \
	else \
		g=$$(mktemp -d /tmp/kernelindex-dist.XXXXXX) && git init -q --bare "$$g" && \
		GIT_DIR="$$g" GIT_WORK_TREE=. git add -A && \
		GIT_DIR="$$g" git archive --format=zip --prefix=$(DIST)/ -o $(DIST).zip $$(GIT_DIR="$$g" git write-tree); \
		rc=$$?; rm -rf "$$g"; exit $$rc; \
	fi
	@echo "$(DIST).zip"

clean: clean-kbench
.PHONY: clean-kbench
clean-kbench:
	$(MAKE) -C kernels clean
