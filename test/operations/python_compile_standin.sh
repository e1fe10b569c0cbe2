#!/bin/sh
# /usr/bin/python3 with test/operations/compile_standin first on its path (a torch.compile stand-in
# where torch has none), for test/suites/providers.sh; the stand-in logs to
# $KBENCH_COMPILE_STANDIN_LOG (the worker's environment has none, so the suite writes a wrapper of
# this script with the log's path in it).
here=$(cd "$(dirname "$0")" && pwd)
PYTHONPATH="$here/compile_standin${PYTHONPATH:+:$PYTHONPATH}" exec /usr/bin/python3 "$@"
