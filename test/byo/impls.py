"""test/byo/impls.py: python implementations for test/suites/byo.sh.

good: a correct LayerNorm backward in plain torch (the registered example);
the others fail on purpose, one way each.
"""
import os
import signal
import sys
import time

import torch


def good(ctx):
    """layer_norm backward with autograd: the forward (untimed, in reset) redone from the current
    inputs before each call, which kbench changes between calls; gradients cleared."""
    H = ctx.axes["hidden"]
    st = {}

    def reset():
        st["x"] = ctx.inputs["x"].detach().clone().requires_grad_(True)
        st["w"] = ctx.inputs["weight"].reshape(H).detach().clone().requires_grad_(True)
        st["b"] = ctx.inputs["bias"].reshape(H).detach().clone().requires_grad_(True)
        st["y"] = torch.nn.functional.layer_norm(st["x"], (H,), st["w"], st["b"], 1e-6)

    def step():
        if "y" not in st:
            reset()
        st["y"].backward(ctx.inputs["dy"], retain_graph=True)
        return {"dx": st["x"].grad, "dweight": st["w"].grad, "dbias": st["b"].grad}
    step.reset = reset
    return step


def _grads(ctx):
    """The honest answer for the current inputs (the cheats below start from it)."""
    inner = good(ctx)
    inner.reset()
    return {k: v.detach().clone() for k, v in inner().items()}


# --- cheats (issue 27): each must not end as a passed run


def replays(ctx):
    """computes the answer once, before the timing, and returns the same tensors from every call."""
    out = _grads(ctx)
    return lambda: out


def ignores_inputs(ctx):
    """does the work every call, but on a private copy of the inputs taken at the start."""
    frozen = {k: v.clone() for k, v in ctx.inputs.items()}

    class C:
        pass
    c = C()
    c.axes, c.inputs = ctx.axes, frozen
    inner = good(c)
    return inner


def first_call_only(ctx):
    """does the work on its first call only, then returns what it had."""
    inner = good(ctx)
    done = {}

    def step():
        if not done:
            done.update({k: v.detach().clone() for k, v in inner().items()})
        return done
    step.reset = inner.reset
    return step


def every_other_call(ctx):
    """does the work on every other call only."""
    inner = good(ctx)
    n = [0]
    last = {}

    def step():
        n[0] += 1
        if n[0] % 2 or not last:
            last.clear()
            last.update({k: v.detach().clone() for k, v in inner().items()})
        return last
    step.reset = inner.reset
    return step


def finishes_later(ctx):
    """returns at once and lets a thread write the outputs after the call returned."""
    import threading
    inner = good(ctx)
    H = ctx.axes["hidden"]
    out = {"dx": torch.zeros_like(ctx.inputs["x"]), "dweight": torch.zeros(H), "dbias": torch.zeros(H)}

    def late():
        time.sleep(0.05)
        for k, v in inner().items():
            out[k].copy_(v)

    def step():
        for v in out.values():
            v.zero_()
        threading.Thread(target=late).start()
        return out
    step.reset = inner.reset
    return step


def wrong(ctx):
    """dx off by 1% in every element: incorrect_numerical."""
    inner = good(ctx)

    def step():
        out = inner()
        return {"dx": out["dx"] * 1.01, "dweight": out["dweight"], "dbias": out["dbias"]}
    step.reset = inner.reset
    return step


def raises(ctx):
    def step():
        raise RuntimeError("deliberate failure in the implementation")
    return step


def crashes(ctx):
    def step():
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    return step


def hangs(ctx):
    def step():
        time.sleep(3600)
    return step


def garbage(ctx):
    """writes over kbench's protocol socket: the parent must refuse it."""
    def step():
        os.write(3, b"\x00\x01 this is not the protocol\n")
        time.sleep(1)
        return {}
    return step


def prints(ctx):
    """prints to stdout and stderr: harmless (they go to the log, not the protocol)."""
    inner = good(ctx)

    def step():
        print("hello from the implementation")
        print("and its stderr", file=sys.stderr)
        return inner()
    step.reset = inner.reset
    return step


def not_callable(ctx):
    return 42


def returns_list(ctx):
    return lambda: [1, 2]


def bad_name(ctx):
    return lambda: {"dz": ctx.inputs["x"]}


def bad_shape(ctx):
    return lambda: {"dx": ctx.inputs["x"][:1]}


def writes_input(ctx):
    return lambda: {"x": ctx.inputs["x"]}


def spawns(ctx):
    """starts a process of its own, then crashes: what it started must not outlive it."""
    import subprocess

    def step():
        subprocess.Popen(["sleep", "4242"])
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGSEGV)
    return step


def leaves_a_process(ctx):
    """a correct implementation that starts a process and leaves it running: it goes when the run ends."""
    import subprocess
    subprocess.Popen(["sleep", "4343"])
    return good(ctx)


def patches_clock(ctx):
    """replaces every clock the harness could time with by a counter, then sleeps 0.2 s a call:
    the run must report the real time (at least 0.2 s), not 1 ns (issue 24)."""
    ticks = [0]

    def fake_ns():
        ticks[0] += 1
        return ticks[0]
    time.monotonic_ns = time.perf_counter_ns = time.time_ns = fake_ns
    time.monotonic = time.perf_counter = time.time = lambda: fake_ns() / 1e9
    inner = good(ctx)

    def step():
        time.sleep(0.2)
        return inner()
    step.reset = inner.reset
    return step


def sleeps(ctx):
    """a correct implementation whose every call takes at least 0.1 s."""
    inner = good(ctx)

    def step():
        time.sleep(0.1)
        return inner()
    step.reset = inner.reset
    return step


def slow_reset(ctx):
    """a correct, fast step whose untimed reset takes 0.1 s: not a lie about the time."""
    inner = good(ctx)
    clear = inner.reset

    def reset():
        time.sleep(0.1)
        clear()
    inner.reset = reset
    return inner
