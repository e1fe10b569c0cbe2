"""A stand-in for torch.compile where torch has none (torch 1.13 here; torch.compile is torch 2.0's),
for test/suites/providers.sh: the torch_compile provider's wiring through kbench and the worker,
not inductor.  It returns the module uncompiled and logs what it was asked to compile to
$KBENCH_COMPILE_STANDIN_LOG.  Where torch has torch.compile it does nothing (the real one runs).
Loaded as sitecustomize by test/operations/python_compile_standin.sh."""
import os

import torch

if not hasattr(torch, "compile"):
    def _compile(model, *args, **kwargs):
        log = os.environ.get("KBENCH_COMPILE_STANDIN_LOG")
        if log:
            with open(log, "a") as f:
                f.write(type(model).__name__ + "\n")
        return model
    torch.compile = _compile
