"""A stand-in for liger_kernel in test/suites/byo.sh: the `liger` implementation's import path and
version recording, on a host without Triton.  Not Liger-Kernel."""
__version__ = "0.0.0-kbench-test"
