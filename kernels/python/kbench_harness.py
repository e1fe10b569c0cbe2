"""kbench_harness.py: runs one python implementation for kbench, in a child process.

kbench (kernels/backend_child.c, impl_python.c) starts this script with the configured
interpreter and drives it over a stream socket on fd 3, one line each way;
the tensors live in a memfd on fd 4, filled by kbench's counter-based
generator.  This process never decides what is measured: kbench sends every
call, keeps every sample and checks the outputs against its float64
reference in C.

    parent                          child
    setup <json>                    ok {"python": ..., "torch": ...}  (versions)
    prepare                         ok      (the implementation's factory, untimed)
    call                            ok      (one untimed call, waited for)
    inputs <i>:<offset>,...         ok      (the next input set: copied into ctx.inputs, untimed)
    reset                           ok      (step.reset(), untimed, before each 'time')
    noop                            ok      (nothing: kbench measures its own round trip)
    time <flush_bytes>              ok <call_ns> <flush_and_call_ns>
    memory                          ok <peak_bytes>
    readback                        ok <output>,<output>...  (written into the tensors)
    check                           ok <json>  (an operation defined as data: its float64 reference for
                                               the current input set, kbench_reference.py, compared with
                                               what readback wrote; after the last call and after each
                                               timed call the guard checks)
    quit                            (exits)
    any failure                     err <message>

A python implementation is a factory: fn(ctx) -> step.  ctx has op, mode,
dtype ("fp32"/"bf16"), torch_dtype, device (a torch.device), axes (dict) and
inputs (dict of torch tensors on the device, copies of kbench's).  step() is
the timed call: it returns a dict {output name: tensor} computed from the
current ctx.inputs.  kbench changes the inputs between timed calls (it
copies another input set into the same ctx.inputs tensors, in place,
untimed) and checks some timed calls' outputs against their own inputs.  If
step has a `reset` attribute, it is called before every call, untimed,
after the inputs changed (e.g. to set gradients to None, as do_bench's
grad_to_none, or to redo a forward pass a backward step needs).
docs/BYO.md has examples.

A user's file is not opened here: kbench read it, checked it (for a
registered one: no symbolic link on its path, the sha256 recorded at
registration) and hands its bytes over on fd 5; they are compiled and run
from that text.  The clocks the timing reads (time.monotonic_ns, CUDA
events) are bound as main()'s locals before the user's code is imported, so
code that replaces time.monotonic_ns or time.perf_counter_ns does not change
what is measured; kbench also checks the reported times against its own
clock around each round trip (kernels/backend_child.c).
"""
import json
import mmap
import os
import platform
import sys
import time
import traceback

SOCK = 3
SHM = 4
SOURCE = 5
_buf = b""
# bound before any user code runs (main() copies them into its locals)
_monotonic_ns = time.monotonic_ns
_os_write = os.write


def send(line):
    data = (line.replace("\n", " ").replace("\r", " ") + "\n").encode("utf-8", "replace")
    while data:
        n = os.write(SOCK, data)
        data = data[n:]


def read_line():
    global _buf
    while b"\n" not in _buf:
        chunk = os.read(SOCK, 65536)
        if not chunk:
            return None
        _buf += chunk
    line, _, _buf = _buf.partition(b"\n")
    return line.decode()


def describe(exc):
    """One line: the exception and where in the implementation it was raised."""
    last = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    msg = last[-1] if last else repr(exc)
    tb = traceback.extract_tb(exc.__traceback__)
    here = os.path.abspath(__file__)
    frames = [f for f in tb if os.path.abspath(f.filename) != here]
    if frames:
        f = frames[-1]
        msg += " (%s:%d in %s)" % (os.path.basename(f.filename), f.lineno, f.name)
    return msg[:400]


class Ctx:
    pass


def load(cfg):
    """The factory, and the versions of what it imports."""
    import torch
    versions = {"python": platform.python_version(), "torch": torch.__version__.split("+")[0]}
    if "builtin" in cfg:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import kbench_providers
        if cfg["builtin"] in kbench_providers.PROVIDERS:
            # one of Liger's other providers, for the operations Liger benchmarks it with
            kbench_builtin = kbench_providers
        elif "reference" in cfg:
            # an operation defined as data: its baselines are in their own file
            import kbench_builtin_defs as kbench_builtin
        else:
            import kbench_builtin
        factory = kbench_builtin.factory(cfg["builtin"], cfg["op"])
        versions.update(kbench_builtin.versions(cfg["builtin"]))
        return factory, versions
    entry = cfg["entry"]
    _, _, rest = entry.partition(":")
    path, _, fn = rest.rpartition(":")
    import linecache
    import types
    # the bytes kbench verified, never the file by its path (it may have been swapped since)
    chunks = []
    while True:
        chunk = os.read(SOURCE, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(SOURCE)
    source = b"".join(chunks)
    code = compile(source, path, "exec", dont_inherit=True)
    # tracebacks quote the lines that ran
    text = source.decode("utf-8", "replace")
    linecache.cache[path] = (len(text), None, text.splitlines(True), path)
    sys.path.insert(0, os.path.dirname(path))
    mod = types.ModuleType("kbench_user_" + fn)
    mod.__file__ = path
    sys.modules[mod.__name__] = mod
    exec(code, mod.__dict__)
    factory = getattr(mod, fn, None)
    if not callable(factory):
        raise AttributeError("%s has no function %s" % (path, fn))
    return factory, versions


def reference_fn(ref_cfg, cache):
    """The reference function: kbench_reference.py's by name, or the named function of a user's
    reference file (a definition loaded with --op-file), compiled once from the bytes kbench read
    when it loaded the definition (never reopened by its path)."""
    import kbench_reference
    if "source" not in ref_cfg:
        fn = getattr(kbench_reference, ref_cfg["function"], None)
        if not callable(fn):
            raise ValueError("kernels/python/kbench_reference.py has no reference %r" % ref_cfg["function"])
        return fn
    if "module" not in cache:
        import types
        mod = types.ModuleType("kbench_user_reference")
        mod.__file__ = ref_cfg["file"]
        exec(compile(ref_cfg["source"], ref_cfg["file"], "exec", dont_inherit=True), mod.__dict__)
        cache["module"] = mod
    fn = getattr(cache["module"], ref_cfg["function"], None)
    if not callable(fn):
        raise ValueError("the reference file %s has no function %s" % (ref_cfg["file"], ref_cfg["function"]))
    return fn


def check(cfg, views, returned, current, cache):
    """The float64 reference of an operation defined as data, compared with the outputs read back.

    The inputs are those of the guard's current set (`current`: name -> its view in the mapping,
    set by the last 'inputs' command; set 0's views before any), so a timed call the guard checks
    (kernels/measure.c) is judged against the reference for *its* inputs.  The reference of each
    set is computed once (`cache`, at most the guard's four sets): a checked call costs one
    comparison, not one float64 reference."""
    import torch
    ref_cfg = cfg.get("reference")
    if not ref_cfg:
        raise ValueError("%s has no python reference" % cfg["op"])
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import kbench_reference
    tensors = ref_cfg["tensors"]
    key = tuple(sorted((name, v[1]["offset"]) for name, v in current.items()))
    got = {}
    for t in tensors:
        v = views.get(t["name"])
        if v is not None and t["role"] not in ("input", "upstream") and v[1]["output"]:
            got[t["name"]] = v[0].to(torch.float64).reshape(t["shape"])
    ref = cache.get(key)
    if ref is None:
        inputs = {}
        for t in tensors:
            v = current.get(t["name"], views.get(t["name"]))
            if v is not None and t["role"] in ("input", "upstream"):
                inputs[t["name"]] = v[0].to(torch.float64).reshape(t["shape"])
        # the reference sees the case's axes (derived ones included) beside the scalars: group_norm's groups
        ref = kbench_reference.run(reference_fn(ref_cfg, cache), inputs, dict(cfg["axes"], **ref_cfg["scalars"]),
                                   tensors, cfg["mode"])
        cache[key] = ref
    names = [t["name"] for t in cfg["tensors"] if t["output"]]
    shapes = {t["name"]: t["shape"] for t in tensors}
    for name in names:
        if name not in ref:
            raise ValueError("the reference %s returned no %s (it returned %s)"
                             % (ref_cfg["function"], name, ", ".join(sorted(ref)) or "nothing"))
        want = 1
        for n in shapes.get(name, []):
            want *= n
        if ref[name].numel() != want:
            raise ValueError("the reference %s returned %s of shape %s, %d values; the definition's shape is %s"
                             % (ref_cfg["function"], name, list(ref[name].shape), ref[name].numel(),
                                shapes.get(name)))
    return kbench_reference.compare(ref, got, returned, names, ref_cfg["rtol"], ref_cfg["atol"])


def main():
    # the clock and the socket's writer as plain locals (no nested function sees them), bound before the
    # user's code is imported: code that replaces time.monotonic_ns or this module's globals does not reach them
    clock = _monotonic_ns
    write = _os_write
    line = read_line()
    if line is None or not line.startswith("setup "):
        send("err expected setup, got %r" % (line or "")[:60])
        return 1
    cfg = json.loads(line[6:])
    try:
        import torch
    except Exception as exc:  # noqa: BLE001 -- any import failure is the run's message
        send("err torch is not importable by %s: %s" % (sys.executable, describe(exc)))
        return 1
    device = torch.device(cfg["device"])
    cuda = device.type == "cuda"
    gpu_timing = cuda  # the timing's own copy: sync() below closes over cuda
    if gpu_timing:
        # the event methods the timing calls, bound before the user's code too
        event = torch.cuda.Event
        ev_record, ev_sync, ev_elapsed = event.record, event.synchronize, event.elapsed_time
    try:
        factory, versions = load(cfg)
    except Exception as exc:  # noqa: BLE001
        send("err " + describe(exc))
        return 1
    send("ok " + json.dumps({k: str(v)[:200] for k, v in versions.items()}, separators=(",", ":")))

    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32,
              "bool": torch.bool}
    mm = mmap.mmap(SHM, cfg["shm_size"])
    views = {}
    for t in cfg["tensors"]:
        n = t["rows"] * t["cols"]
        if t["offset"] < 0 or n <= 0:
            continue
        v = torch.frombuffer(mm, dtype=dtypes[t["dtype"]], count=n, offset=t["offset"])
        views[t["name"]] = (v.view(t["rows"], t["cols"]), t)
    if cuda:
        torch.cuda.set_device(device)

    def sync():
        if cuda:
            torch.cuda.synchronize(device)

    step = reset = None
    # the guard's current input set (name -> (view, its tensor with the set's offset)) and the
    # float64 reference of each set the check has computed
    current = {name: v for name, v in views.items() if v[1]["input"]}
    refs = {}
    returned = set()
    last = None
    flush = None
    ctx = None
    while True:
        cmd = read_line()
        if cmd is None or cmd == "quit":
            return 0
        try:
            if cmd == "prepare":
                ctx = Ctx()
                ctx.op, ctx.mode, ctx.dtype = cfg["op"], cfg["mode"], cfg["dtype"]
                ctx.torch_dtype = dtypes[cfg["dtype"]]
                ctx.device = device
                ctx.axes = dict(cfg["axes"])
                # copies: the implementation cannot change the inputs the check reads
                ctx.inputs = {name: v.to(device, copy=True) for name, (v, t) in views.items() if t["input"]}
                step = factory(ctx)
                if not callable(step):
                    raise TypeError("the factory returned %r, not a callable step" % type(step).__name__)
                reset = getattr(step, "reset", None)
                sync()
                send("ok")
            elif cmd == "call":
                if reset:
                    reset()
                last = step()
                sync()
                send("ok")
            elif cmd == "noop":
                send("ok")
            elif cmd.startswith("inputs "):
                # the guard's next input set (kernels/measure.c), in the mapping at these offsets
                for item in cmd[7:].split(","):
                    i, _, off = item.partition(":")
                    t = cfg["tensors"][int(i)]
                    src = torch.frombuffer(mm, dtype=dtypes[t["dtype"]], count=t["rows"] * t["cols"],
                                           offset=int(off)).view(t["rows"], t["cols"])
                    ctx.inputs[t["name"]].copy_(src)
                    current[t["name"]] = (src, dict(t, offset=int(off)))
                sync()
                send("ok")
            elif cmd == "reset":
                # before each 'time', in its own round trip: kbench's clock around 'time' sees only the call
                if reset:
                    reset()
                sync()
                send("ok")
            elif cmd.startswith("time "):
                nbytes = int(cmd[5:])
                if nbytes and (flush is None or flush.numel() < nbytes):
                    flush = torch.empty(nbytes, dtype=torch.uint8, device=device)
                sync()
                t0 = clock()
                if gpu_timing:
                    start, end = event(enable_timing=True), event(enable_timing=True)
                    if nbytes:
                        flush.zero_()
                    ev_record(start)
                    last = step()
                    ev_record(end)
                    ev_sync(end)
                    op_ns = ev_elapsed(start, end) * 1e6
                    total = max(clock() - t0, op_ns)
                else:
                    if nbytes:
                        flush.fill_(t0 & 0xFF)
                    t1 = clock()
                    last = step()
                    t2 = clock()
                    op_ns, total = t2 - t1, t2 - t0
                data = ("ok %d %d\n" % (int(op_ns), int(total))).encode()
                while data:
                    data = data[write(SOCK, data):]
            elif cmd == "memory":
                if reset:
                    reset()
                if cuda:
                    sync()
                    torch.cuda.reset_peak_memory_stats(device)
                    last = step()
                    sync()
                    peak = torch.cuda.max_memory_allocated(device) - (flush.numel() if flush is not None else 0)
                else:
                    # no allocator statistics on the CPU: the inputs and the returned outputs
                    last = step()
                    peak = sum(t.numel() * t.element_size() for t in ctx.inputs.values())
                    if isinstance(last, dict):
                        peak += sum(t.numel() * t.element_size() for t in last.values() if torch.is_tensor(t))
                send("ok %d" % max(int(peak), 0))
            elif cmd == "readback":
                if not isinstance(last, dict):
                    raise TypeError("the step returned %r; it must return a dict of output tensors by name"
                                    % type(last).__name__)
                names = []
                for name, val in last.items():
                    if name not in views or views[name][1]["input"]:
                        outs = [n for n, (v, t) in views.items() if not t["input"]]
                        raise KeyError("the step returned %r, which is not an output of %s (outputs: %s)"
                                       % (name, cfg["op"], ", ".join(outs)))
                    if not torch.is_tensor(val):
                        raise TypeError("output %r is a %s, not a tensor" % (name, type(val).__name__))
                    dst = views[name][0]
                    if val.numel() != dst.numel():
                        raise ValueError("output %r has %d elements, kbench expects %d (%d x %d)"
                                         % (name, val.numel(), dst.numel(), dst.shape[0], dst.shape[1]))
                    dst.copy_(val.detach().reshape(dst.shape).to("cpu", dst.dtype))
                    names.append(name)
                returned = set(names)
                send("ok " + ",".join(names))
            elif cmd == "check":
                send("ok " + json.dumps(check(cfg, views, returned, current, refs), separators=(",", ":")))
            else:
                send("err unknown command %r" % cmd[:40])
        except Exception as exc:  # noqa: BLE001 -- every failure is the run's message
            send("err " + describe(exc))


if __name__ == "__main__":
    try:
        rc = main()
    except BaseException as exc:  # noqa: BLE001
        try:
            send("err " + describe(exc))
        finally:
            os._exit(1)
    sys.exit(rc)
