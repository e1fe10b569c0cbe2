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

SQL_PARTS = $(sort $(wildcard sql/[0-9][0-9]_*.sql))
# Install scripts of released versions are kept as they shipped
# (sql/released/); each upgrade script is assembled from its fragments in
# sql/updates/A--B/NN_*.sql, in order (docs/ARCHITECTURE.md, "Upgrades").
UPDATE_DIRS = $(sort $(wildcard sql/updates/*--*))
UPDATE_SCRIPTS = $(patsubst sql/updates/%,sql/$(EXTENSION)--%.sql,$(UPDATE_DIRS))
DATA = $(sort $(wildcard sql/released/$(EXTENSION)--*.sql))
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
REGRESS = $(patsubst test/sql/%.sql,%,$(sort $(wildcard test/sql/*.sql)))
REGRESS_OPTS = --inputdir=test --outputdir=test --load-extension=$(EXTENSION) \
	--temp-config=test/regress.conf --temp-instance=test/tmp_check

# The isolation specs have an instance of their own, test/isolation.conf:
# the worker serves their database, and the queue limits are small.
ISOLATION = $(patsubst test/specs/%.spec,%,$(sort $(wildcard test/specs/*.spec)))
ISOLATION_OPTS = --inputdir=test --outputdir=test/isolation_output --load-extension=$(EXTENSION) \
	--temp-config=test/isolation.conf --temp-instance=test/tmp_check_isolation

EXTRA_CLEAN = $(EXTENSION)-$(EXTVERSION).zip test/results test/regression.diffs test/regression.out test/isolation_output \
	test/tmp_check test/tmp_check_isolation test/log

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(OBJS): kernelindex.control core/ki_json.h core/ki_schema.h src/kernelindex.h src/store.h src/runner.h src/estimate.h src/catalog_import.h src/import.h src/ingest.h $(wildcard src/liger/*.h) kernels/kbench.h

# The install script is the sql/NN_*.sql parts in order.
sql/$(EXTENSION)--$(EXTVERSION).sql: $(SQL_PARTS) kernelindex.control
	cat $(SQL_PARTS) > $@

# An upgrade script is its fragments in order.
define update_rule
sql/$(EXTENSION)--$(1).sql: $$(sort $$(wildcard sql/updates/$(1)/*.sql))
	cat $$^ > $$@
endef
$(foreach d,$(UPDATE_DIRS),$(eval $(call update_rule,$(notdir $(d)))))

$(shlib): $(KBENCH_LIB)

.PHONY: kbench
$(KBENCH_LIB): kbench
kbench:
	$(MAKE) -C kernels

install: install-kbench-cuda install-kbench-python install-kbench-bin
# The command line tools: the programs in pkglibdir beside libkbench_cuda.so and
# kernelindex_python/ (which they find through their own real path,
# kernels/backend.c kb_object_dir), and a link to each in PostgreSQL's bindir
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
	$(INSTALL_DATA) kernels/python/kbench_harness.py kernels/python/kbench_builtin.py '$(DESTDIR)$(pkglibdir)/kernelindex_python/'

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
