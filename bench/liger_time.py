#!/usr/bin/env python3
"""bench/liger_time.py: Liger-Kernel's time for kbench workloads, in ms.

Imports liger_kernel from third_party/Liger-Kernel/src (a git-ignored
checkout) and times it the way Liger's own benchmark scripts in that
checkout (benchmark/scripts/) define each mode.  Our own harness: nothing
is copied from Liger's scripts, which were read to learn their definitions.

Usage:
    bench/liger_time.py OP MODE DTYPE key=value...      one row; the median (ms) on the last line
    bench/liger_time.py --batch FILE                    one line per row of FILE (see below)
    bench/liger_time.py --dry-run (OP MODE DTYPE key=value... | --batch FILE)
                                                        what would be timed, per row; no torch import
    bench/liger_time.py --notes (OP MODE DTYPE key=value... | --batch FILE)
                                                        per row "KEY<TAB>codes" of where it still departs
                                                        from Liger's scripts (NOTE_TEXT), then "# code: text"
Options: --device cuda:N, --row-timeout-s S (per row, default 150), --budget-s S (whole
batch: rows not started in time answer "err: skipped"), --gpu-time N (after the timing,
run N more calls under torch.profiler and report the summed durations of the device
events -- kernels, memsets, copies -- per call; 0 = off.  Not in Liger's scripts: it
tells a host-bound timing, where the median is far above it, from a GPU-bound one).

FILE has one workload a line, "OP MODE DTYPE key=value..." (blank lines and
"#" lines ignored).  Each row answers one tab-separated line, flushed as soon
as it is known:
    KEY  median_ms  p20_ms  p80_ms  gpu_ms|-          or      KEY  err: reason
with KEY = "OP:MODE:DTYPE:key=value,key=value" (the axes in the order given),
and lines starting with "#" for context.  Each row runs in its own try block
under a SIGALRM limit (a row that fails or overruns answers "err: ..." and
the batch goes on); its tensors are dropped and torch.cuda.empty_cache() is
called between rows.  Used by bench/device.sh.

What is timed (Liger's scripts: benchmark/scripts/utils.py run_speed_benchmark
for layer_norm, jsd, distill_jsd_loss; benchmark_megatron_cross_entropy.py's
own loop for megatron_cross_entropy):

  do_bench ops: triton.testing.do_bench(fn, warmup=25, rep=10,
    quantiles=[0.5, 0.2, 0.8], grad_to_none=[first input]) -- rep 10 ms is the
    default of Liger's run_speed_benchmark, which build_speed_bench_fn uses;
    do_bench flushes a 256 MB L2 buffer before each call and times each call
    with its own CUDA events.  Modes:
      forward   fn = the forward call
      backward  the forward once, dy = randn_like(y) once; fn = y.backward(dy, retain_graph=True)
      full      fn = forward, then y.backward(randn_like(y), retain_graph=True) (the random
                upstream gradient is drawn inside the timed call)
    Only the first input is in grad_to_none: parameter gradients (layer_norm's
    weight and bias, distill's student weight) and, for jsd, the leaf under
    the log_softmax, accumulate into .grad from the second call on (an extra
    add kernel each call), as in Liger's scripts.

  layer_norm (rows R, hidden H; benchmark_layer_norm.py): x = randn(R, H, dtype,
    requires_grad) (a leaf); LigerLayerNorm(H, eps=1e-6).to(dev).to(dtype)
    (weight ones, bias zeros, both Parameters that receive gradients).
  jsd (tokens T, vocab V; benchmark_jsd.py): input = randn(T, V, requires_grad)
    .log_softmax(-1) -- NOT a leaf: backward/full also run log_softmax's
    backward and accumulate into the leaf's .grad; target = randn(T, V)
    .log_softmax(-1); LigerJSD() (beta 0.5, ignore_index -100, no labels).
    The random scalar upstream gradient (not 1) makes Liger's backward scale dX
    (one T x V multiply).
  distill_jsd_loss (tokens T, hidden H, vocab V; benchmark_distill_jsd_loss.py):
    LigerFusedLinearJSDFunction.apply(student_x, student_lin.weight, teacher_x,
    teacher_lin.weight, target, None, None, 0.5, 0.5) -- beta 0.5, ignore_index
    -100, temperature 1, compiled=True (torch.compile), chunk_size 1024 at the
    Function's defaults, as Liger's wrapper passes no more;
    student_lin = nn.Linear(H // 2, V, bias=False, dtype), teacher_lin =
    nn.Linear(H, V, bias=False, dtype) (default init, .to(dev));
    student_x = rand(T, H // 2) (uniform [0, 1), requires_grad), teacher_x =
    rand(T, H), target = randint(0, V, (T,)).  The random upstream gradient
    makes Liger's backward scale grad_input and grad_weight.
  megatron_cross_entropy (seq S, batch B, vocab V;
    benchmark_megatron_cross_entropy.py, TP=1): LigerMegatronCrossEntropy()
    (liger_kernel.megatron: the vocab-parallel CE -- not LigerCrossEntropyLoss),
    logits = randn(S, B, V, dtype, requires_grad), target = randint(0, V, (S, B)).
    Not do_bench: 10 warm-up steps, then 5 samples, each one pair of CUDA
    events around 50 back-to-back steps (no L2 flush), sample = elapsed / 50;
    median, p20, p80 of the 5 samples.  Steps:
      forward        ce(logits, target)
      backward/full  logits.grad = None; ce(logits, target).sum().backward()
    Liger's "backward" is exactly its "full" (forward included; its script says
    to subtract the forward row for a backward-only figure).

Known differences from Liger's scripts that remain:
  - Workload sizes are kbench's.  Liger's current scripts sweep token counts
    sized by a memory probe for a model config (llama_3_8b: hidden 4096, vocab
    128256, bf16); the layer_norm fp32 rows (rows 4096, hidden 1024..16384)
    match only the older script (liger 0.6.0) that produced Liger's published
    layer_norm CSV rows -- and that script used rep=500, not 10.
  - dtypes Liger's scripts do not run are built the same way in that dtype:
    jsd bf16 (Liger's jsd is fp32 only), megatron_cross_entropy fp32 (bf16 only).
  - megatron_cross_entropy: tp_group=None and no torch.distributed; Liger
    initializes NCCL with world size 1 and passes that group.  Both take the
    same path (all-reduces skipped when the group is None or of size 1).
  - All rows run in one process on --device; Liger runs one script per op
    (one process for all its rows too).  Memory benchmarks are not run.
  - The Liger code is the checkout in third_party/Liger-Kernel, whatever its
    version; Liger's published CSV rows come from older releases (layer_norm
    0.6.0, distill_jsd_loss 0.4.2, jsd 0.3.1 / 0.8.0, megatron 0.8.0) and other
    GPUs and hosts.  Host speed matters: do_bench's per-call events include the
    Python/autograd/launch time whenever it exceeds the GPU work queued behind
    the L2 flush, so small shapes time the host (hence --gpu-time).
  - --gpu-time and the per-row/whole-batch limits are ours.
kbench modes are not all Liger's: kbench's jsd and distill_jsd_loss "full"
assume an upstream gradient of 1 and a leaf input (no extra work), while
Liger's full (timed here) draws a random one and, for jsd, also runs the
log_softmax backward.
"""
import argparse
import gc
import os
import signal
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIGER_SRC = os.path.join(ROOT, "third_party", "Liger-Kernel", "src")

MODES = ("forward", "backward", "full")
DTYPES = ("fp32", "bf16")
OPS = {
    "layer_norm": ("rows", "hidden"),
    "megatron_cross_entropy": ("seq", "batch", "vocab"),
    "jsd": ("tokens", "vocab"),
    "distill_jsd_loss": ("tokens", "hidden", "vocab"),
}
# utils.py run_speed_benchmark: do_bench's default warmup, rep 10, QUANTILES
DO_BENCH = {"warmup": 25, "rep": 10, "quantiles": [0.5, 0.2, 0.8]}
# benchmark_megatron_cross_entropy.py: _WARMUP_ITERS, _MEASURE_ITERS, 5 samples
LOOP = {"warmup_iters": 10, "iters": 50, "samples": 5}


class Row:
    def __init__(self, tokens):
        if len(tokens) < 3:
            raise ValueError("want OP MODE DTYPE key=value...")
        self.op, self.mode, self.dtype = tokens[:3]
        self.axes_given = [a for a in tokens[3:] if not a.startswith("dtype=")]
        self.key = f"{self.op}:{self.mode}:{self.dtype}:{','.join(self.axes_given)}"
        if self.op not in OPS:
            raise ValueError(f"unknown op {self.op}")
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode}")
        if self.dtype not in DTYPES:
            raise ValueError(f"unknown dtype {self.dtype}")
        ax = {}
        for a in self.axes_given:
            k, sep, v = a.partition("=")
            if not sep or not v.isdigit() or int(v) <= 0:
                raise ValueError(f"bad axis {a!r}")
            ax[k] = int(v)
        want = OPS[self.op]
        if sorted(ax) != sorted(want):
            raise ValueError(f"{self.op} wants axes {', '.join(want)}")
        if self.op == "distill_jsd_loss" and ax["hidden"] % 2:
            raise ValueError("hidden must be even (student hidden = hidden / 2)")
        self.ax = ax


def row_key(tokens):
    """KEY for a row that may not parse (the same rule as Row.key)."""
    t = list(tokens) + ["?"] * max(0, 3 - len(tokens))
    return f"{t[0]}:{t[1]}:{t[2]}:{','.join(a for a in tokens[3:] if not a.startswith('dtype='))}"


# Where a row departs from Liger's own scripts: a code per difference, printed in
# bench/device.sh's table (column liger_diff) with this legend under it.
NOTE_TEXT = {
    "d": "dtype Liger's script does not run (its jsd runs fp32 only, its megatron CE bf16 only): "
         "built the same way in this dtype",
    "s": "layer_norm fp32 R x H: Liger's current script runs the model dtype (bf16) over token counts; "
         "these rows match its 0.6.0 script (M 4096), which made Liger's published layer_norm rows "
         "with rep 500, not 10",
    "g": "Liger's upstream gradient is random, not 1: its backward scales the stored gradients "
         "(jsd: and runs log_softmax's backward, its input being log_softmax(leaf)); kbench's mode "
         "assumes neither",
    "l": "Liger's megatron script times 50 back-to-back steps per CUDA-event pair, no L2 flush, 5 samples; "
         "kbench flushes L2 before each timed call (its protocol, do_bench's)",
}


def note_codes(r):
    """The NOTE_TEXT codes that apply to row r (no torch needed)."""
    n = []
    if (r.op == "jsd" and r.dtype != "fp32") or (r.op == "megatron_cross_entropy" and r.dtype != "bf16"):
        n.append("d")
    if r.op == "layer_norm" and r.dtype == "fp32":
        n.append("s")
    if r.op in ("jsd", "distill_jsd_loss") and r.mode != "forward":
        n.append("g")
    if r.op == "megatron_cross_entropy":
        n.append("l")
    return n


def notes(r):
    """Where the row departs from Liger's script, in words."""
    return [NOTE_TEXT[c] for c in note_codes(r)]


def print_notes(rows):
    """--notes: KEY and its codes (or '-') per row, then the legend; no torch import."""
    bad, used = 0, []
    for t in rows:
        key = row_key(t)
        try:
            codes = note_codes(Row(t))
        except ValueError as e:
            print(f"{key}\terr: invalid row: {e}")
            bad += 1
            continue
        used += [c for c in codes if c not in used]
        print(f"{key}\t{''.join(codes) or '-'}")
    for c in sorted(used):
        print(f"# {c}: {NOTE_TEXT[c]}")
    return 1 if bad else 0


def describe(r):
    """What time_row would time for r, in words (no torch needed)."""
    return _describe(r) + [f"note: {x}" for x in notes(r)]


def _describe(r):
    a, d, m = r.ax, r.dtype, r.mode
    if r.op == "layer_norm":
        setup = (f"x = randn({a['rows']}, {a['hidden']}, {d}, requires_grad) leaf; "
                 f"LigerLayerNorm({a['hidden']}, eps=1e-6).to(dev).to({d}); weight/bias grads accumulate")
        fwd = "ln(x)"
    elif r.op == "jsd":
        setup = (f"input = randn({a['tokens']}, {a['vocab']}, {d}, requires_grad).log_softmax(-1) (non-leaf); "
                 f"target = randn(same).log_softmax(-1); LigerJSD() beta 0.5")
        fwd = "jsd(input, target)"
    elif r.op == "distill_jsd_loss":
        hs = a["hidden"] // 2
        setup = (f"student_x = rand({a['tokens']}, {hs}, {d}, requires_grad); teacher_x = rand({a['tokens']}, "
                 f"{a['hidden']}, {d}); Linear({hs}->{a['vocab']}) and Linear({a['hidden']}->{a['vocab']}), "
                 f"no bias, {d}; target = randint(0, {a['vocab']}, ({a['tokens']},)); "
                 "weights 0.5/0.5, beta 0.5, T 1, ignore -100, compiled, chunk 1024")
        fwd = "LigerFusedLinearJSDFunction.apply(student_x, W_s, teacher_x, W_t, target, None, None, 0.5, 0.5)"
    else:
        setup = (f"logits = randn({a['seq']}, {a['batch']}, {a['vocab']}, {d}, requires_grad); "
                 f"target = randint(0, {a['vocab']}, ({a['seq']}, {a['batch']})); "
                 "LigerMegatronCrossEntropy(), tp_group None")
        if m == "forward":
            step = "ce(logits, target)"
        else:
            step = "logits.grad = None; ce(logits, target).sum().backward()  (forward included)"
        how = (f"loop: {LOOP['warmup_iters']} warm-up steps, {LOOP['samples']} samples x "
               f"{LOOP['iters']} back-to-back steps, no L2 flush; median/p20/p80 of the samples")
        return [setup, f"timed step: {step}", how]
    if m == "forward":
        timed = fwd
    elif m == "backward":
        timed = f"y = {fwd} once, dy = randn_like(y) once; y.backward(dy, retain_graph=True)"
    else:
        timed = f"y = {fwd}; y.backward(randn_like(y), retain_graph=True)"
    how = (f"triton.testing.do_bench(warmup={DO_BENCH['warmup']}, rep={DO_BENCH['rep']}, "
           f"quantiles={DO_BENCH['quantiles']}, grad_to_none=[first input])")
    return [setup, f"timed: {timed}", how]


class RowTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise RowTimeout("row time limit")


def _quantile(xs, q):
    """Linear interpolation between closest ranks, as torch.quantile does."""
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


class Timer:
    """Builds each op's workload and times it; torch, triton and Liger imported once."""

    def __init__(self, device):
        sys.path.insert(0, LIGER_SRC)
        import torch
        import triton.testing
        self.torch = torch
        self.do_bench = triton.testing.do_bench
        self.dev = torch.device(device)
        torch.cuda.set_device(self.dev)
        self.dt = {"fp32": torch.float32, "bf16": torch.bfloat16}

    def versions(self):
        torch = self.torch
        import triton
        try:
            import liger_kernel
            where = os.path.dirname(liger_kernel.__file__)
        except Exception as e:  # noqa: BLE001
            where = f"not importable ({e})"
        return (f"# torch {torch.__version__}, triton {triton.__version__}, "
                f"{torch.cuda.get_device_name(self.dev)}, liger_kernel from {where}")

    # --- the do_bench modes of Liger's utils.run_speed_benchmark -------------
    def _do_bench_fn(self, mode, fwd):
        torch = self.torch
        if mode == "forward":
            return fwd
        if mode == "backward":
            y = fwd()
            dy = torch.randn_like(y)
            return lambda: y.backward(dy, retain_graph=True)

        def full():
            y = fwd()
            y.backward(torch.randn_like(y), retain_graph=True)
        return full

    def _setup(self, r):
        """(fwd callable, first input -- the grad_to_none list --, objects the row keeps alive)."""
        torch, dev, dt, a = self.torch, self.dev, self.dt[r.dtype], r.ax
        if r.op == "layer_norm":
            from liger_kernel.transformers.layer_norm import LigerLayerNorm
            x = torch.randn(a["rows"], a["hidden"], device=dev, dtype=dt, requires_grad=True)
            ln = LigerLayerNorm(hidden_size=a["hidden"], eps=1e-6).to(dev).to(dt)
            return (lambda: ln(x)), x, (ln,)
        if r.op == "jsd":
            from liger_kernel.transformers.jsd import LigerJSD
            leaf = torch.randn(a["tokens"], a["vocab"], device=dev, dtype=dt, requires_grad=True)
            inp = leaf.log_softmax(dim=-1)
            tgt = torch.randn(a["tokens"], a["vocab"], device=dev, dtype=dt).log_softmax(dim=-1)
            jsd = LigerJSD()
            return (lambda: jsd(inp, tgt)), inp, (leaf,)
        if r.op == "distill_jsd_loss":
            from liger_kernel.chunked_loss.jsd_loss import LigerFusedLinearJSDFunction
            T, H, V = a["tokens"], a["hidden"], a["vocab"]
            xs = torch.rand(T, H // 2, device=dev, dtype=dt).requires_grad_(True)
            xt = torch.rand(T, H, device=dev, dtype=dt)
            ws = torch.nn.Linear(H // 2, V, bias=False, dtype=dt).to(dev)
            wt = torch.nn.Linear(H, V, bias=False, dtype=dt).to(dev)
            tg = torch.randint(0, V, (T,), device=dev, dtype=torch.long)
            f = LigerFusedLinearJSDFunction.apply
            return (lambda: f(xs, ws.weight, xt, wt.weight, tg, ws.bias, wt.bias, 0.5, 0.5)), xs, (ws, wt)
        raise ValueError(r.op)

    def _megatron(self, r):
        torch, dev, dt, a = self.torch, self.dev, self.dt[r.dtype], r.ax
        from liger_kernel.megatron import LigerMegatronCrossEntropy
        ce = LigerMegatronCrossEntropy()
        logits = torch.randn(a["seq"], a["batch"], a["vocab"], device=dev, dtype=dt, requires_grad=True)
        target = torch.randint(0, a["vocab"], (a["seq"], a["batch"]), device=dev, dtype=torch.long)
        if r.mode == "forward":
            def step():
                ce(logits, target, tp_group=None)
        else:
            def step():
                logits.grad = None
                ce(logits, target, tp_group=None).sum().backward()
        return step

    def _loop(self, step):
        torch = self.torch
        for _ in range(LOOP["warmup_iters"]):
            step()
        torch.cuda.synchronize()
        samples = []
        for _ in range(LOOP["samples"]):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(LOOP["iters"]):
                step()
            end.record()
            torch.cuda.synchronize()
            samples.append(start.elapsed_time(end) / LOOP["iters"])
        return [_quantile(samples, q) for q in DO_BENCH["quantiles"]]

    def _gpu_time(self, fn, calls):
        """GPU time per call (ms): the summed durations of the kernels, memsets and copies that
        `calls` calls ran, from the device events only (launch events carry the same kernels)."""
        torch = self.torch
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
        us = sum(e.time_range.elapsed_us() for e in prof.events() if e.device_type == DeviceType.CUDA)
        return us / calls / 1e3

    def time_row(self, r, gpu_calls=0):
        """(median, p20, p80, gpu_ms or None) in ms."""
        if r.op == "megatron_cross_entropy":
            fn = self._megatron(r)
            q = self._loop(fn)
        else:
            fwd, first, _alive = self._setup(r)
            fn = self._do_bench_fn(r.mode, fwd)
            q = self.do_bench(fn, warmup=DO_BENCH["warmup"], rep=DO_BENCH["rep"],
                              grad_to_none=[first], quantiles=DO_BENCH["quantiles"])
        gpu = self._gpu_time(fn, gpu_calls) if gpu_calls > 0 else None
        return q[0], q[1], q[2], gpu

    def cleanup(self):
        """Drop the row's tensors and give their memory back before the next row."""
        gc.collect()
        for f in (self.torch.cuda.synchronize, self.torch.cuda.empty_cache):
            try:
                f()
            except Exception:  # noqa: BLE001
                pass


def one_line(e):
    msg = " ".join(str(e).split())
    return f"{type(e).__name__}: {msg}"[:160]


def read_batch(path):
    rows = []
    with open(path) as f:
        for line in f:
            t = line.split()
            if t and not t[0].startswith("#"):
                rows.append(t)
    return rows


def run_rows(rows, args):
    """Time each row (token lists) and print one line per row."""
    start = time.monotonic()
    timer = None
    try:
        timer = Timer(args.device)
        print(timer.versions(), flush=True)
    except Exception as e:  # noqa: BLE001
        for t in rows:
            print(f"{row_key(t)}\terr: setup failed: {one_line(e)}", flush=True)
        return 1
    signal.signal(signal.SIGALRM, _on_alarm)
    bad = 0
    for t in rows:
        key = row_key(t)
        left = args.budget_s - (time.monotonic() - start) if args.budget_s else None
        if left is not None and left < 5:
            print(f"{key}\terr: skipped: batch budget of {args.budget_s:.0f} s spent", flush=True)
            bad += 1
            continue
        limit = args.row_timeout_s if left is None else min(args.row_timeout_s, left)
        t0 = time.monotonic()
        try:
            r = Row(t)
            signal.alarm(max(1, int(limit)))
            try:
                med, p20, p80, gpu = timer.time_row(r, args.gpu_time)
            finally:
                signal.alarm(0)
            g = f"{gpu:.4f}" if gpu is not None else "-"
            line = f"{key}\t{med:.4f}\t{p20:.4f}\t{p80:.4f}\t{g}"
        except KeyboardInterrupt:
            raise
        except RowTimeout:
            line = f"{key}\terr: over the row limit of {int(limit)} s"
            bad += 1
        except Exception as e:  # noqa: BLE001
            line = f"{key}\terr: {one_line(e)}"
            bad += 1
        timer.cleanup()
        print(line, flush=True)
        print(f"# {key} took {time.monotonic() - t0:.1f} s", flush=True)
    return 1 if bad else 0


def dry_run(rows):
    print(f"# dry run: Liger from {LIGER_SRC}" + ("" if os.path.isdir(LIGER_SRC) else " (absent)"))
    bad = 0
    for t in rows:
        key = row_key(t)
        try:
            r = Row(t)
        except ValueError as e:
            print(f"{key}\terr: invalid row: {e}")
            bad += 1
            continue
        print(key)
        for line in describe(r):
            print(f"    {line}")
    return 1 if bad else 0


def main(argv):
    p = argparse.ArgumentParser(description="Liger-Kernel's time for kbench workloads (see the module docstring).")
    p.add_argument("--batch", metavar="FILE", help="rows, one 'OP MODE DTYPE key=value...' a line")
    p.add_argument("--dry-run", action="store_true", help="print what would be timed; import nothing")
    p.add_argument("--notes", action="store_true",
                   help="per row, the codes of where it departs from Liger's scripts, then their legend; import nothing")
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--row-timeout-s", type=float, default=150.0)
    p.add_argument("--budget-s", type=float, default=0.0, help="whole batch; 0 = no limit")
    p.add_argument("--gpu-time", type=int, default=0, metavar="N",
                   help="also report GPU kernel time per call, profiled over N calls")
    p.add_argument("row", nargs="*", help="OP MODE DTYPE key=value... (without --batch)")
    args = p.parse_args(argv)
    if args.batch:
        if args.row:
            p.error("give a row or --batch, not both")
        rows = read_batch(args.batch)
    else:
        if not args.row:
            p.error("give OP MODE DTYPE key=value... or --batch FILE")
        rows = [args.row]
    if args.notes:
        return print_notes(rows)
    if args.dry_run:
        return dry_run(rows)
    if args.batch:
        return run_rows(rows, args)
    # one row: as before, the median alone on the last line
    try:
        r = Row(args.row)
    except ValueError as e:
        p.error(str(e))
    timer = Timer(args.device)
    med, p20, p80, gpu = timer.time_row(r, args.gpu_time)
    extra = f" gpu {gpu:.4f}" if gpu is not None else ""
    print(f"# {r.key}: p20 {p20:.4f} p80 {p80:.4f}{extra} ms")
    print(f"{med:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
