"""The kernels of the vector engine's thread pool: row ranges claimed with atomic counters.

A batch call (a step, a resume after a refill, the random policy's actions) is a *job* over
the rows ``0 .. n - 1`` of one batch, cut into one segment per thread. Every thread taking
part, the calling one included, claims ranges of ``CTL_MIN_ROWS`` rows from the atomic counter
of its own segment first, then from the other segments' (:func:`claim_rows`), so a thread that
starts late or runs slowly leaves its rows to the others, while in the common case each thread
keeps its own rows from step to step (they stay in its core's cache). The calling thread
returns once every row has run. A worker thread enters :func:`serve` and stays in it, spinning
on its segment's counter between jobs, until no job has come for ``idle_cycles`` or the control
block is stopped, so consecutive steps reach it without a wake-up (it yields its core between
polls, so a thread waiting for the core runs first). Nothing in a job's hot path
takes the GIL or sleeps.

Control block (``int64``, :func:`control_size` entries): a header line (``CTL_DONE``: rows
finished in the current job; ``CTL_RESULT``: the sum of its range results, games starved of
draws; ``CTL_N`` rows; ``CTL_SEGMENTS``; ``CTL_MIN_ROWS``; ``CTL_STOP``: workers leave
:func:`serve`; ``CTL_ACTIVE``: workers in it; ``CTL_IDS``: segment numbers handed to workers),
then one cache line per segment whose first entry is its claim counter,
``job << 32 | next row``, ``job`` being ``seq << 8 | kind``. A claim carries the kind of the
job it belongs to; a claim at or past the segment's end is void (it may be late for a job
already finished, and runs nothing). A real claim belongs to the job whose number it carries,
and that job cannot finish before the claim's rows are done, so the counters are reset only
between jobs.
"""

from __future__ import annotations

import sys

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from greed_env.vector.episodes import random_actions, resume_range, step_range
from greed_env.vector.jit import kernel

__all__ = [
    "CTL_ACTIVE",
    "CTL_DONE",
    "CTL_IDS",
    "CTL_MIN_ROWS",
    "CTL_N",
    "CTL_RESULT",
    "CTL_SEGMENTS",
    "CTL_STOP",
    "JOB_RANDOM",
    "JOB_RESUME",
    "JOB_STEP",
    "LINE",
    "atomic_add",
    "atomic_load",
    "atomic_store",
    "claim_rows",
    "control_size",
    "cycles",
    "drive",
    "serve",
    "yield_core",
]

CTL_DONE = 0
CTL_RESULT = 1
CTL_N = 2
CTL_SEGMENTS = 3
CTL_MIN_ROWS = 4
CTL_STOP = 5
CTL_ACTIVE = 6
CTL_IDS = 7
LINE = 8
"""int64 entries per cache line: the header and every segment counter have a line each."""


def control_size(segments: int) -> int:
    """Entries of a control block with ``segments`` segments."""
    return LINE * (segments + 1)


JOB_STEP = 1
JOB_RESUME = 2
JOB_RANDOM = 3

_ROW_MASK = (1 << 32) - 1

_YIELD = "SwitchToThread" if sys.platform == "win32" else "sched_yield"
"""The C function that yields the processor (POSIX ``sched_yield``, Windows ``SwitchToThread``)."""


def _is_int64_vector(arr: types.Type) -> bool:
    return isinstance(arr, types.Array) and arr.ndim == 1 and arr.dtype == types.int64


def _pointer(context, builder, aryty, ary, idxty, idx):  # type: ignore[no-untyped-def]
    array = context.make_array(aryty)(context, builder, ary)
    index = context.cast(builder, idx, idxty, types.intp)
    return cgutils.get_item_pointer(context, builder, aryty, array, [index])


@intrinsic
def atomic_load(typingctx, arr, idx):  # type: ignore[no-untyped-def]
    """``arr[idx]`` read atomically (acquire) from an int64 vector."""
    if not _is_int64_vector(arr):
        return None

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        ptr = _pointer(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        return builder.load_atomic(ptr, "acquire", 8)

    return types.int64(arr, idx), codegen


@intrinsic
def atomic_store(typingctx, arr, idx, val):  # type: ignore[no-untyped-def]
    """``arr[idx] = val`` written atomically (sequentially consistent) to an int64 vector."""
    if not _is_int64_vector(arr):
        return None

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        ptr = _pointer(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        value = context.cast(builder, args[2], sig.args[2], types.int64)
        builder.store_atomic(value, ptr, "seq_cst", 8)
        return context.get_dummy_value()

    return types.void(arr, idx, val), codegen


@intrinsic
def atomic_add(typingctx, arr, idx, val):  # type: ignore[no-untyped-def]
    """``arr[idx] += val`` atomically on an int64 vector; returns the value before."""
    if not _is_int64_vector(arr):
        return None

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        ptr = _pointer(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        value = context.cast(builder, args[2], sig.args[2], types.int64)
        return builder.atomic_rmw("add", ptr, value, "seq_cst")

    return types.int64(arr, idx, val), codegen


@intrinsic
def yield_core(typingctx):  # type: ignore[no-untyped-def]
    """``sched_yield()`` (``SwitchToThread()`` on Windows): let another thread waiting for this
    core run first."""

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        fnty = ir.FunctionType(ir.IntType(32), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _YIELD)
        builder.call(fn, [])
        return context.get_dummy_value()

    return types.void(), codegen


@intrinsic
def cycles(typingctx):  # type: ignore[no-untyped-def]
    """The processor's cycle counter (``llvm.readcyclecounter``: the time-stamp counter on x86)."""

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        fnty = ir.FunctionType(ir.IntType(64), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
        return builder.call(fn, [])

    return types.int64(), codegen


@kernel
def _run_job(
    kind, lo, hi, S, E, acts, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending, obs_slots,
    mask_slots, final_obs, legal, out_slot, unif01, out,
):  # fmt: skip
    if kind == JOB_STEP:
        return step_range(
            lo, hi, S, E, acts, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending,
            obs_slots[out_slot[0]], mask_slots[out_slot[0]], final_obs, legal,
        )  # fmt: skip
    if kind == JOB_RESUME:
        return resume_range(
            lo, hi, S, E, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending,
            obs_slots[out_slot[0]], mask_slots[out_slot[0]], final_obs, legal,
        )  # fmt: skip
    return random_actions(lo, hi, S, unif01, tab, out)


@kernel
def _segment_end(ctl, seg):
    return ctl[CTL_N] * (seg + 1) // ctl[CTL_SEGMENTS]


@kernel
def claim_rows(
    ctl, home, S, E, acts, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending,
    obs_slots, mask_slots, final_obs, legal, out_slot, unif01, out,
):  # fmt: skip
    """Claim and run row ranges of the current job, segment ``home`` first, then the others
    in turn, until every segment's counter has passed its end; returns the rows run here."""
    segments = ctl[CTL_SEGMENTS]
    size = ctl[CTL_MIN_ROWS]
    ran = 0
    for step in range(segments):
        seg = (home + step) % segments
        slot = LINE * (seg + 1)
        end = _segment_end(ctl, seg)
        while (atomic_load(ctl, slot) & _ROW_MASK) < end:
            claim = atomic_add(ctl, slot, size)
            lo = claim & _ROW_MASK
            if lo >= end:
                break
            hi = min(end, lo + size)
            result = _run_job(
                (claim >> 32) & 0xFF, lo, hi, S, E, acts, tab, ep, fp, oidx, oval, oflag, codes, unif,
                rewards, pending, obs_slots, mask_slots, final_obs, legal, out_slot, unif01, out,
            )  # fmt: skip
            atomic_add(ctl, CTL_RESULT, result)
            atomic_add(ctl, CTL_DONE, hi - lo)
            ran += hi - lo
    return ran


@kernel
def drive(
    ctl, job, S, E, acts, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending,
    obs_slots, mask_slots, final_obs, legal, out_slot, unif01, out,
):  # fmt: skip
    """Run ``job`` (``seq << 8 | kind``) over every row with whichever workers are serving
    ``ctl``, from the calling thread (segment 0); returns the sum of the range results."""
    atomic_store(ctl, CTL_DONE, 0)
    atomic_store(ctl, CTL_RESULT, 0)
    for seg in range(ctl[CTL_SEGMENTS]):
        start = ctl[CTL_N] * seg // ctl[CTL_SEGMENTS]
        atomic_store(ctl, LINE * (seg + 1), job << 32 | start)
    claim_rows(
        ctl, 0, S, E, acts, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending,
        obs_slots, mask_slots, final_obs, legal, out_slot, unif01, out,
    )  # fmt: skip
    n = ctl[CTL_N]
    while atomic_load(ctl, CTL_DONE) < n:
        yield_core()
    return atomic_load(ctl, CTL_RESULT)


@kernel
def serve(
    ctl, idle_cycles, S, E, acts, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending,
    obs_slots, mask_slots, final_obs, legal, out_slot, unif01, out,
):  # fmt: skip
    """A worker's loop: take a segment (1 .. segments - 1), then run the rows it can claim of
    every job published on ``ctl``, its segment first, until ``idle_cycles`` cycles of the
    cycle counter pass without work or ``ctl`` is stopped; returns the rows it ran. Between
    polls it yields its core, so a thread waiting for the core (the caller's, another
    process's) runs first."""
    atomic_add(ctl, CTL_ACTIVE, 1)
    segments = ctl[CTL_SEGMENTS]
    home = 1 + atomic_add(ctl, CTL_IDS, 1) % max(1, segments - 1)
    slot = LINE * (home + 1)
    end = _segment_end(ctl, home)
    ran = 0
    since = cycles()
    polls = 0
    while atomic_load(ctl, CTL_STOP) == 0:
        if (atomic_load(ctl, slot) & _ROW_MASK) < end:
            ran += claim_rows(
                ctl, home, S, E, acts, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending,
                obs_slots, mask_slots, final_obs, legal, out_slot, unif01, out,
            )  # fmt: skip
            since = cycles()
            polls = 0
        elif (
            cycles() - since > idle_cycles or polls > idle_cycles >> 6
        ):  # a counter that never ticks
            break
        else:
            polls += 1
            yield_core()
    atomic_add(ctl, CTL_ACTIVE, -1)
    return ran
