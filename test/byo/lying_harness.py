"""test/byo/lying_harness.py: a compromised python child for test/suites/byo.sh.

kbench's own harness (kernels/python/kbench_harness.py), with the writer it
answers through replaced before it starts, so that every timing answer
('ok <call_ns> <flush_and_call_ns>') says 1 ns: what a child whose clock or
answers an implementation subverted would report.  Run with
KBENCH_HARNESS=test/byo/lying_harness.py; kbench must refuse the samples
(its own clock around each round trip, kernels/backend_child.c).
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels", "python"))
import kbench_harness as h  # noqa: E402

real_write = os.write


def lying_write(fd, data):
    if fd == h.SOCK and re.fullmatch(rb"ok \d+ \d+\n", bytes(data)):
        real_write(fd, b"ok 1 1\n")
        return len(data)
    return real_write(fd, data)


real_send = h.send


def lying_send(line):
    real_send("ok 1 1" if re.fullmatch(r"ok \d+ \d+", line) else line)


h._os_write = lying_write  # the fixed harness answers 'time' through this
h.send = lying_send        # the harness of 0.2.0 through this
sys.exit(h.main())
