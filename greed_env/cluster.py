"""Ray: reaching a cluster, and chunks of work as Ray tasks.

Games (evaluations, tournaments, benchmark fields) and the levels of an exact solve can run on
a Ray cluster instead of this machine's processes. This module is what they share:

* :func:`check_address`: the ``--address`` a command takes: ``auto`` (the cluster this node
  belongs to: ``RAY_ADDRESS``, else the one ``ray start`` started here), ``ray://HOST:PORT``
  (Ray Client, from outside the cluster) or ``HOST:PORT`` (a head node's address).
* :func:`connected`: connect for the length of a block (once: a command connects at its
  start, and every call inside reuses the connection, so the cluster's worker processes keep
  what they loaded from one task to the next).
* :func:`run_chunks`: a function over a list of items, one Ray task per item, the results as
  they come. A task whose worker process or node is lost is run again by Ray (its
  ``max_retries``); each item's result is taken once, so nothing is counted twice. Ctrl-C
  cancels the tasks still running and raises ``KeyboardInterrupt`` within a second.

Ray is a heavy optional stack: it is imported when a cluster is asked for, and a missing Ray
ends the command with one line naming the extra to install (:data:`RAY_EXTRA`). Every node
needs greed-env installed, at the driver's version (a task refuses to run otherwise).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import pickle
import re
import signal
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from greed_env import __version__

__all__ = [
    "RAY_EXTRA",
    "ClusterError",
    "check_address",
    "cluster_cpus",
    "connected",
    "require_ray",
    "run_chunks",
]

RAY_EXTRA = "pip install 'greed-env[ray]'"
"""How to install Ray for greed_env (the ``ray`` extra)."""

TASK_RETRIES = 3
"""Times Ray runs a task again whose worker process or node was lost."""

WAIT_S = 0.25
"""Seconds between looks at the tasks' progress (and chances to take Ctrl-C)."""

REACH_S = 5.0
"""Seconds to wait for the head node to answer before connecting (Ray itself waits minutes
on an address where nothing listens)."""

_ADDRESS = re.compile(r"^(?:ray://)?\[?[A-Za-z0-9_.:-]+?\]?:\d{1,5}$")


class ClusterError(RuntimeError):
    """No cluster to run on: Ray is missing, the address is malformed or unreachable, or a
    node runs another greed-env. The message is one line a command prints as it is."""


def check_address(text: str) -> str:
    """``text`` as a cluster address: ``auto``, ``ray://HOST:PORT`` or ``HOST:PORT``.

    >>> check_address("ray://10.0.0.5:10001")
    'ray://10.0.0.5:10001'

    Raises:
        ClusterError: anything else, naming the forms accepted.
    """
    address = text.strip()
    if address == "auto" or _ADDRESS.match(address):
        return address
    raise ClusterError(
        f"expected auto (the cluster this node belongs to), ray://HOST:PORT (Ray Client) or HOST:PORT "
        f"(a head node), got {text!r}"
    )


def require_ray() -> Any:
    """The ``ray`` module.

    Raises:
        ClusterError: Ray is not installed (the message names the extra).
    """
    try:
        import ray
    except ImportError:
        raise ClusterError(f"running on a Ray cluster needs Ray, which is not installed: {RAY_EXTRA}") from None
    return ray


@contextlib.contextmanager
def connected(address: str | None) -> Iterator[Any]:
    """Within the block this process is a driver of the cluster at ``address`` (None: nothing
    happens and the block gets None); the ``ray`` module is yielded. A connection already open
    is reused and left open; one opened here is closed at the end.

    Raises:
        ClusterError: no Ray, a malformed address, or no cluster there.
    """
    if address is None:
        yield None
        return
    check_address(address)
    ray = require_ray()
    if ray.is_initialized():
        yield ray
        return
    _check_reachable(address)
    main = threading.current_thread() is threading.main_thread()
    on_term = signal.getsignal(signal.SIGTERM) if main else None
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING, configure_logging=True)
        if main:  # ray.init sets a SIGTERM handler of its own: keep the command's (exit 143, quietly)
            signal.signal(signal.SIGTERM, on_term)
    except (ConnectionError, ValueError, RuntimeError, TimeoutError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ClusterError(
            f"no Ray cluster at --address {address} ({first}); start one with `ray start --head` "
            "(docs/scale.md, Evaluation and tables on a cluster)"
        ) from None
    try:
        yield ray
    finally:
        ray.shutdown()


def _endpoint(address: str) -> tuple[str, int] | None:
    """The head's ``(host, port)`` that ``address`` means (``auto``: ``RAY_ADDRESS``, else the
    cluster ``ray start`` last started here), or None where only Ray can tell."""
    if address == "auto":
        address = os.environ.get("RAY_ADDRESS", "").strip()
        if not address or address == "auto":
            try:
                from ray._private.services import find_bootstrap_address

                address = find_bootstrap_address(None) or ""
            except Exception:  # another Ray's layout: Ray looks for itself
                return None
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def _check_reachable(address: str) -> None:
    """Refuse an address where nothing answers, within :data:`REACH_S` seconds.

    Raises:
        ClusterError: naming the address and what the connection met.
    """
    where = _endpoint(address)
    if where is None:
        return
    try:
        with socket.create_connection(where, timeout=REACH_S):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ClusterError(
            f"no Ray cluster at --address {address}: nothing answers at {where[0]}:{where[1]} ({reason}); "
            "start one with `ray start --head` (docs/scale.md, Evaluation and tables on a cluster)"
        ) from None


def cluster_cpus() -> int:
    """CPUs of the cluster this process is connected to (at least 1)."""
    ray = require_ray()
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


# ------------------------------------------------------------------------------------------
# tasks

_SETUP_DONE: dict[str, str] = {}
"""In a worker process: the digest of the setup it last ran (a pool initializer's)."""


def _task(version: str, prepare: bytes, setup: bytes, item: bytes) -> Any:
    """One item, in a worker process of the cluster: check the version, ``prepare`` (imports
    that unpickling needs), the setup once per worker process, then ``fn(item)``."""
    if version != __version__:
        import socket

        raise ClusterError(
            f"node {socket.gethostname()} runs greed-env {__version__}, the driver {version}: "
            "install the same version on every node"
        )
    do_first = pickle.loads(prepare)
    if do_first is not None:
        do_first()
    fn, initializer, initargs = pickle.loads(setup)
    digest = hashlib.sha256(setup).hexdigest()
    if initializer is not None and _SETUP_DONE.get("setup") != digest:
        initializer(*initargs)
        _SETUP_DONE["setup"] = digest
    return fn(pickle.loads(item))


_REMOTE: dict[str, Any] = {}


def _remote(ray: Any) -> Any:
    if "task" not in _REMOTE:
        _REMOTE["task"] = ray.remote(num_cpus=1, max_retries=TASK_RETRIES, retry_exceptions=False)(_task)
    return _REMOTE["task"]


def run_chunks(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    *,
    prepare: Callable[[], None] | None = None,
    initializer: Callable[..., Any] | None = None,
    initargs: tuple[Any, ...] = (),
) -> Iterator[tuple[int, Any]]:
    """``(i, fn(items[i]))`` for every item, in the order the tasks finish, each item a Ray task
    on the cluster this process is connected to (:func:`connected`).

    ``prepare`` runs first in the worker (imports the items need to unpickle: the ``py:`` bot
    files), then ``initializer(*initargs)`` once per worker process (a pool initializer: bots
    loaded into module state), then ``fn``. ``fn``, the initializer and the items travel by
    pickle, as to a local process pool. A task lost with its worker process or node is run
    again (:data:`TASK_RETRIES` times); an item's result is yielded once. On any exception
    (Ctrl-C included) the tasks still running are cancelled.

    Raises:
        ValueError: ``fn``, the initializer or an item does not pickle.
        ClusterError: not connected, or a node with another greed-env.
        Exception: what ``fn`` raised in a task (Ray's error, whose cause is the original).
    """
    ray = require_ray()
    if not ray.is_initialized():
        raise ClusterError("not connected to a Ray cluster (greed_env.cluster.connected)")
    if not items:
        return
    try:
        setup = pickle.dumps((fn, initializer, initargs))
        blobs = [pickle.dumps(item) for item in items]
        first = pickle.dumps(prepare)
    except Exception as exc:
        raise ValueError(f"the work cannot be sent to the cluster ({exc})") from None
    task = _remote(ray)
    setup_ref = ray.put(setup)
    refs = {task.remote(__version__, first, setup_ref, blob): i for i, blob in enumerate(blobs)}
    pending = list(refs)
    try:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1, timeout=WAIT_S)
            for ref in ready:
                yield refs[ref], _result(ray, ref)
    finally:
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)


def _result(ray: Any, ref: Any) -> Any:
    """The task's result; a task's own exception is raised as itself when Ray carries it."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause if isinstance(getattr(exc, "cause", None), BaseException) else None
        if cause is not None:
            raise cause from None
        raise

