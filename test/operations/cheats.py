"""Cheating implementations of an operation defined as data (rms_norm; test/suites/operations.sh,
issue 27): each starts from the honest huggingface baseline and must not end as a passed run.  The
guard (kernels/measure.c) rotates four input sets through the timed calls and checks up to 16 of
them, chosen at random, against the float64 reference for their own inputs (the python child's
check, kernels/python/kbench_harness.py)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels", "python"))
import kbench_builtin_defs  # noqa: E402


def _honest(ctx):
    return kbench_builtin_defs.rms_norm(ctx, "huggingface")


def _answer(step):
    step.reset()
    return {k: v.detach().clone() for k, v in step().items()}


def replays(ctx):
    """computes the answer once, before the timing, and returns it from every call."""
    out = _answer(_honest(ctx))
    return lambda: out


def first_call_only(ctx):
    """does the work on its first timed call only, then returns what it had."""
    inner = _honest(ctx)
    done = {}

    def step():
        if not done:
            done.update(_answer(inner))
        return done
    return step


def every_other_call(ctx):
    """does the work on every other call only."""
    inner = _honest(ctx)
    n, last = [0], {}

    def step():
        n[0] += 1
        if n[0] % 2 or not last:
            last.clear()
            last.update(_answer(inner))
        return last
    return step


def ignores_inputs(ctx):
    """does the work every call, on a private copy of the inputs taken at the start."""
    class C:
        pass
    c = C()
    c.op, c.mode, c.dtype, c.torch_dtype, c.device, c.axes = (ctx.op, ctx.mode, ctx.dtype, ctx.torch_dtype,
                                                               ctx.device, ctx.axes)
    c.inputs = {k: v.clone() for k, v in ctx.inputs.items()}
    return _honest(c)
