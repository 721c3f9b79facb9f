"""How a ``greed`` command ends on Ctrl-C and SIGTERM: within seconds, with one line.

A compiled solver kernel (numba, ``nogil``) runs a whole solve without returning to Python, and
Python runs its SIGINT handler only in the main thread between bytecodes. Left alone, Ctrl-C
waited for the kernel to end (minutes, hours for a big table) and then was lost, or ended the
process with a segmentation fault inside the parallel pass (exit 139, seen on the
ten_thousand duel); a ``KeyboardInterrupt`` raised inside one of numba's compiler callbacks is
printed as "Exception ignored" and lost.

:func:`handling` (the ``greed`` command wraps every sub-command in it) adds two things:

* a *watcher*: the C-level signal handler writes to a wakeup pipe
  (:func:`signal.set_wakeup_fd`), so a thread of ours sees the interrupt even while the main
  thread is inside compiled code, and sends it on to the main thread when another thread
  received it while the main thread waits on a lock or a pipe (interrupted only by a signal
  of its own thread). The main
  thread has ``grace`` seconds to take it (its Python code raises ``KeyboardInterrupt``, once:
  a second Ctrl-C does not cut short the cleanup the first started) and ``settle`` more to reach
  the command's handler
  (:func:`acknowledge`); otherwise (stuck in a compiled pass, or the exception swallowed by a
  callback) the watcher ends the process itself: it removes the temporary files of atomic
  writes in progress (:func:`greed_env.files.discard_pending`), ends worker processes, prints
  the message and exits with status 130. Nothing is half-written: every file the package
  writes appears by a rename, or not at all.
* the record of :mod:`greed_env.interrupts`: inside its *deferred* regions
  (:func:`greed_env.solver.solve` runs in one) the handler only records the interrupt and the
  code raises ``KeyboardInterrupt`` at its next safe point (between the stages of a solve, at
  the end of the region), so an exception never starts inside numba's own C code (where it is
  lost, or worse), and the watcher ends a region that reaches no safe point within ``grace``
  seconds.

SIGTERM (``kill``, a scheduler's time limit) ends the process at once under :func:`handling`,
quietly and with status 143 (128 + SIGTERM): the temporary files of writes in progress are
removed and the worker processes ended first (:func:`exit_now`). Left to its default action,
it killed the parent alone, and each worker then printed a ``BrokenPipeError`` traceback as it
sent its result to nobody.

Outside :func:`handling` nothing changes: Python's own handler raises ``KeyboardInterrupt`` as
usual. A process started with SIGINT (or SIGTERM) ignored (a background job of a script) keeps
ignoring it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType, ModuleType
from typing import NoReturn, TextIO

from greed_env import interrupts, progress
from greed_env.files import discard_pending

__all__ = [
    "EXIT_STATUS",
    "GRACE_S",
    "SETTLE_S",
    "TERM_STATUS",
    "WAKE_S",
    "acknowledge",
    "exit_now",
    "handling",
    "report",
]

GRACE_S = 3.0
"""Seconds the main thread has to take an interrupt (raise it) before the watcher ends the
process."""

SETTLE_S = 10.0
"""Seconds more for the raised interrupt to reach the command's handler (:func:`acknowledge`):
the ``finally`` blocks on the way (worker pools, progress bars) run in this time."""

WAKE_S = 0.2
"""Seconds after which a Ctrl-C that reached another thread is sent to the main thread itself:
a lock or queue it waits on (a worker pool's results) is interrupted only by a signal of its
own."""

EXIT_STATUS = 130
"""128 + SIGINT, what a shell reports for a command ended by Ctrl-C."""

TERM_STATUS = 128 + signal.SIGTERM
"""143, what a shell reports for a command ended by SIGTERM."""


class _Session:
    """One :func:`handling` block: its record of the interrupt (:mod:`greed_env.interrupts`),
    whether the command acknowledged it, and how the watcher reports."""

    def __init__(
        self, record: interrupts.Record, message: str = "interrupted", stream: TextIO | None = None,
        grace: float = GRACE_S, settle: float = SETTLE_S,
    ) -> None:
        self.record = record
        self.acknowledged = threading.Event()
        self.timing = False  # the watcher is timing the main thread's answer to a Ctrl-C
        self.message = message
        self.stream = stream
        self.grace = grace
        self.settle = settle

    @property
    def active(self) -> bool:
        return self.record.active


_SESSION: _Session | None = None  # the running handling() block


def acknowledge() -> None:
    """The command's handler has caught the interrupt (it prints its line, saves what it must
    and returns 130): the watcher no longer ends the process by itself."""
    if _SESSION is not None:
        _SESSION.acknowledged.set()


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    if interrupts.take():
        raise KeyboardInterrupt


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    exit_now(TERM_STATUS)


def report(message: str = "interrupted", stream: TextIO | None = None) -> None:
    """Write ``message`` as a line of its own on ``stream`` (default standard error): the
    progress bars still open (the package's, and tqdm's of stable-baselines3 in training) are
    closed first, so none is drawn again after it; a bar drawn in place on a terminal is cleared,
    and elsewhere, where tqdm bars were drawn, the message starts on a new line (a bar cut short
    mid-draw leaves its line open)."""
    progress.close_display()
    tqdm_module = sys.modules.get("tqdm")
    if tqdm_module is not None:
        for bar in list(getattr(tqdm_module.tqdm, "_instances", ())):
            with contextlib.suppress(Exception):
                bar.close()
    out = stream or sys.stderr
    try:
        if out.isatty():
            out.write("\r\033[K")
        elif tqdm_module is not None:  # a bar cut short mid-draw leaves its line open
            out.write("\n")
        out.write(f"{message}\n")
        out.flush()
    except (OSError, ValueError):
        pass


def exit_now(status: int = EXIT_STATUS) -> NoReturn:
    """End the process at once with ``status``, without interpreter shutdown: the temporary
    files of writes in progress are removed, worker processes ended, the standard streams
    flushed, a progress bar on a terminal cleared (it hides the cursor while it draws)."""
    discard_pending()
    progress.close_display()
    mp = sys.modules.get("multiprocessing")
    if mp is not None:
        _end_children(mp)
        _release_semaphores()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)


def _end_children(mp: ModuleType) -> None:
    """Terminate the worker processes, after telling the pools' worker handlers to stop: a
    handler replaces a worker that ended (``Pool._maintain_pool``), and a replacement started
    just before ``os._exit`` finds its parent gone while it reads its start-up data and prints
    a traceback (``EOFError: Ran out of input``) after 'interrupted'."""
    pool = sys.modules.get("multiprocessing.pool")
    handlers: list[threading.Thread] = []
    if pool is not None:
        handle = pool.Pool._handle_workers.__func__  # a classmethod: each access binds anew
        for thread in threading.enumerate():
            if getattr(getattr(thread, "_target", None), "__func__", None) is handle:
                thread._state = pool.TERMINATE  # type: ignore[attr-defined]
                handlers.append(thread)
    for child in mp.active_children():
        with contextlib.suppress(Exception):
            child.terminate()
    for thread in handlers:  # a handler wakes as its workers end, and leaves its loop
        if thread is not threading.current_thread():
            thread.join(timeout=1.0)
    for child in mp.active_children():  # one started before its handler saw the stop
        with contextlib.suppress(Exception):
            child.terminate()


def _release_semaphores() -> None:
    """Unlink the named semaphores of this process's pools and queues, as their finalizers do at
    a normal exit. ``os._exit`` skips those finalizers, and multiprocessing's resource tracker
    would then unlink them itself with a warning on standard error after 'interrupted'."""
    util = sys.modules.get("multiprocessing.util")
    synchronize = sys.modules.get("multiprocessing.synchronize")
    if util is None or synchronize is None:
        return
    cleanup = synchronize.SemLock._cleanup
    for finalizer in list(getattr(util, "_finalizer_registry", {}).values()):
        if getattr(finalizer, "_callback", None) is cleanup:
            with contextlib.suppress(Exception):
                finalizer()
    # another thread may be inside a finalizer of its own, between unlinking a semaphore and
    # telling the tracker so: wait (briefly) for the tracker's lock, which that message holds
    tracker = getattr(sys.modules.get("multiprocessing.resource_tracker"), "_resource_tracker", None)
    lock = getattr(tracker, "_lock", None)
    if lock is not None and lock.acquire(timeout=1.0):
        lock.release()


def _end_now(session: _Session) -> None:
    """End the process at once: its main thread did not take the interrupt in time."""
    discard_pending()
    report(session.message, session.stream)
    exit_now(EXIT_STATUS)


_STOP = b"\0"  # not a signal number: :func:`handling` ends its watcher with it


def _watch(read_fd: int, session: _Session) -> None:
    try:
        while True:
            data = os.read(read_fd, 64)
            if not data or _STOP in data or not session.active:
                return
            if signal.SIGTERM in data:  # the main thread may be in compiled code or a wait
                exit_now(TERM_STATUS)
            if signal.SIGINT in data and not session.timing:  # the first: later ones add nothing
                session.timing = True
                _take_or_end(session)
    except OSError:
        return
    finally:
        os.close(read_fd)


_WAITS = {
    ("threading.py", "wait"),  # Condition and Event waits: pool results, thread joins
    ("connection.py", "_recv"),  # a pipe to a worker process
    ("connection.py", "_poll"),
    ("selectors.py", "select"),
    ("queues.py", "get"),
}
"""(file, function) of the Python waits where the main thread is sent the signal itself."""


def _wake_main_thread() -> None:
    """Send SIGINT to the main thread when it waits in one of :data:`_WAITS` (a lock or a pipe
    is interrupted only by a signal of its own thread), and never into compiled or foreign
    code, which may not survive an interrupted system call."""
    main = threading.main_thread().ident
    frame = sys._current_frames().get(main) if main is not None else None
    if frame is None or not hasattr(signal, "pthread_kill"):
        return
    if (os.path.basename(frame.f_code.co_filename), frame.f_code.co_name) in _WAITS:
        with contextlib.suppress(OSError, ValueError):
            signal.pthread_kill(main, signal.SIGINT)  # type: ignore[arg-type]


def _take_or_end(session: _Session) -> None:
    """The first Ctrl-C of a session: wake the main thread if a blocking wait holds it, give it
    its grace and settle times, else end the process."""
    record = session.record
    record.requested.set()
    if not record.raised.wait(WAKE_S) and record.defer == 0:
        _wake_main_thread()
    taken = record.raised.wait(session.grace) and session.acknowledged.wait(session.settle)
    if not taken and session.active:
        _end_now(session)


def _forget_in_child() -> None:
    """A forked child does not share the parent's watcher (its thread is not copied)."""
    global _SESSION
    _SESSION = None
    with contextlib.suppress(ValueError, OSError):
        signal.set_wakeup_fd(-1)
        if signal.getsignal(signal.SIGTERM) is _on_sigterm:  # a child ends as SIGTERM ends it
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_in_child)


@contextlib.contextmanager
def handling(
    message: str = "interrupted", stream: TextIO | None = None, grace: float = GRACE_S, settle: float = SETTLE_S
) -> Iterator[None]:
    """Within the block, Ctrl-C is noticed even inside compiled code, and SIGTERM ends the
    process quietly with its worker processes (see the module docstring).

    ``message`` is the line the watcher prints on ``stream`` (default standard error) when it
    ends the process itself; the caller prints its own on ``KeyboardInterrupt`` and calls
    :func:`acknowledge`. ``grace`` and ``settle``: the seconds of the module docstring. Only the
    main thread may install it; elsewhere, inside another block, or where SIGINT is ignored, the
    block runs unchanged.
    """
    global _SESSION
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        or _SESSION is not None
    ):
        yield
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    try:
        previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except ValueError:
        os.close(read_fd)
        os.close(write_fd)
        yield
        return
    previous_handler = signal.signal(signal.SIGINT, _on_sigint)
    previous_term = signal.getsignal(signal.SIGTERM)
    if previous_term is not signal.SIG_IGN:
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        with interrupts.recording() as record:
            session = _SESSION = _Session(record, message, stream, grace, settle)
            watcher = threading.Thread(target=_watch, args=(read_fd, session), name="greed-interrupts", daemon=True)
            watcher.start()
            try:
                yield
            finally:
                session.acknowledged.set()  # a watcher still waiting returns
    finally:
        _SESSION = None
        signal.signal(signal.SIGINT, previous_handler)
        signal.signal(signal.SIGTERM, previous_term)
        signal.set_wakeup_fd(previous_fd)
        with contextlib.suppress(OSError):
            os.write(write_fd, _STOP)
        os.close(write_fd)
