"""A stand-in for liger_kernel in test/suites/byo.sh, providers.sh and liger_standins.sh: the `liger` implementation's
import path and version recording, and the wiring of Liger's liger_* providers (torch modules under
Liger's class names), on a host without Triton.  Not Liger-Kernel."""
__version__ = "0.0.0-kbench-test"
