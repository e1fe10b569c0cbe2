#!/bin/sh
# /usr/bin/python3 with test/operations/compile_standin first on its path (a torch.compile stand-in
# where torch has none), for test/suites/operations.sh; KBENCH_COMPILE_STANDIN_LOG defaults to
# $KBENCH_COMPILE_STANDIN_DIR/compile.log when that is set (the worker's environment has neither,
# so the suite writes a copy of this script with the log's path in it).
here=$(cd "$(dirname "$0")" && pwd)
PYTHONPATH="$here/compile_standin${PYTHONPATH:+:$PYTHONPATH}" exec /usr/bin/python3 "$@"
