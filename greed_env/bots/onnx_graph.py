"""What an ONNX bot file holds, read before onnxruntime sees it: its size, its input and output,
and the operators its graph uses.

An exported bot is data: a feed-forward graph from the observation batch ``obs`` to the logits
``logits``. :func:`check_graph` refuses a file that is anything more before a session is built:

* larger than :data:`MAX_ONNX_BYTES`;
* an operator outside :data:`ALLOWED_OPS` (the operators the exporters write:
  :func:`greed_env.bots.export.onnx_logits_bytes`, used by ``greed export`` and the RLlib
  export), an operator of another domain, model-local functions, a subgraph, training
  information;
* tensors whose data lies in other files (external data);
* an input or output other than the card's: one float32 input ``(batch, obs_dim)`` and one
  float32 output ``(batch, num_actions)``.

The file is read with a small reader of the protobuf wire format (:func:`read_graph`), so the
check needs neither the ``onnx`` package nor torch: the ``[onnx]`` extra (onnxruntime alone)
checks every bot it runs. The reader follows ``onnx.proto``'s field numbers; the tests compare
what it reads with what ``onnx.load`` reads for every shipped bot.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import cast

from greed_env.bots.errors import CorruptBotError

__all__ = ["ALLOWED_OPS", "MAX_ONNX_BYTES", "GraphSummary", "TensorInfo", "check_graph", "read_graph"]

MAX_ONNX_BYTES = 64 * 2**20
"""The largest ONNX bot file loaded (64 MiB): the largest shipped bot is under 10 MB; a plain
MLP of three layers of 2,048 units is about 35 MB."""

ALLOWED_OPS = frozenset(
    {
        # the network: linear layers and activations (tanh, or relu with --activation relu)
        "Gemm", "MatMul", "Add", "Tanh", "Relu",
        # the feature readings and the observation preprocessing (train/features.py)
        "Slice", "Mul", "Div", "Sub", "Unsqueeze", "Reshape", "Concat", "Cast", "Clip",
        "Greater", "GreaterOrEqual", "Not", "And", "Where", "ReduceMax", "Shape", "Expand",
    }
)
"""Operators (default ONNX domain) an exported bot may use: those the exporters write."""

FLOAT = 1
"""``TensorProto.FLOAT``: the element type of the observation and the logits."""

_DEFAULT_DOMAINS = ("", "ai.onnx")

# field numbers of onnx.proto
_MODEL_GRAPH, _MODEL_OPSET, _MODEL_TRAINING, _MODEL_FUNCTIONS = 7, 8, 20, 25
_OPSET_DOMAIN = 1
_GRAPH_NODE, _GRAPH_INITIALIZER, _GRAPH_INPUT, _GRAPH_OUTPUT, _GRAPH_SPARSE = 1, 5, 11, 12, 15
_NODE_OP_TYPE, _NODE_ATTRIBUTE, _NODE_DOMAIN = 4, 5, 7
_ATTR_TENSOR, _ATTR_GRAPH, _ATTR_TENSORS, _ATTR_GRAPHS = 5, 6, 10, 11
_TENSOR_NAME, _TENSOR_EXTERNAL, _TENSOR_LOCATION = 8, 13, 14
_VALUE_NAME, _VALUE_TYPE = 1, 2
_TYPE_TENSOR = 1
_TENSOR_ELEM, _TENSOR_SHAPE = 1, 2
_SHAPE_DIM = 1
_DIM_VALUE, _DIM_PARAM = 1, 2


class _WireError(ValueError):
    """Bytes that are not a protobuf message."""


@dataclass(frozen=True)
class TensorInfo:
    """A graph input or output: its name, element type and dims (an int, or the name of a
    symbolic dim such as ``batch``, or None when the file gives neither)."""

    name: str
    elem_type: int
    dims: tuple[int | str | None, ...]


@dataclass
class GraphSummary:
    """What :func:`read_graph` reads of a model."""

    ops: set[tuple[str, str]] = field(default_factory=set)
    """``(domain, op_type)`` of every node."""
    opset_domains: set[str] = field(default_factory=set)
    inputs: list[TensorInfo] = field(default_factory=list)
    """Graph inputs that are not initializers (the values the caller feeds)."""
    outputs: list[TensorInfo] = field(default_factory=list)
    odd: list[str] = field(default_factory=list)
    """What the file holds that a bot's graph never does (functions, subgraphs, external data)."""


def _varint(data: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise _WireError("a number runs past the end")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _fields(data: memoryview) -> Iterator[tuple[int, int, int | memoryview]]:
    """``(field number, wire type, value)`` of each field of the message ``data``: an int for
    numbers, a view of the bytes of a length-delimited field (a string or a nested message)."""
    pos, end = 0, len(data)
    while pos < end:
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise _WireError("field number 0")
        if wire == 0:
            value, pos = _varint(data, pos)
            yield number, wire, value
        elif wire == 1 or wire == 5:
            size = 8 if wire == 1 else 4
            if pos + size > end:
                raise _WireError("a fixed-size number runs past the end")
            yield number, wire, int.from_bytes(data[pos : pos + size], "little")
            pos += size
        elif wire == 2:
            size, pos = _varint(data, pos)
            if pos + size > end:
                raise _WireError("a field runs past the end")
            yield number, wire, data[pos : pos + size]
            pos += size
        else:
            raise _WireError(f"wire type {wire}")


def _sub(data: memoryview, number: int) -> Iterator[memoryview]:
    for n, wire, value in _fields(data):
        if n == number and wire == 2:
            yield cast(memoryview, value)


def _text(data: memoryview, number: int) -> str:
    found = ""
    for value in _sub(data, number):
        found = bytes(value).decode("utf-8", errors="replace")
    return found


def _int(data: memoryview, number: int) -> int | None:
    found = None
    for n, wire, value in _fields(data):
        if n == number and wire == 0:
            found = cast(int, value)
    return found


def _tensor_problem(tensor: memoryview) -> str | None:
    if _int(tensor, _TENSOR_LOCATION) == 1 or any(True for _ in _sub(tensor, _TENSOR_EXTERNAL)):
        return f"tensor {_text(tensor, _TENSOR_NAME)!r} keeps its data in another file (external data)"
    return None


def _value_info(data: memoryview) -> TensorInfo:
    elem, dims = 0, []
    for type_proto in _sub(data, _VALUE_TYPE):
        for tensor in _sub(type_proto, _TYPE_TENSOR):
            elem = _int(tensor, _TENSOR_ELEM) or 0
            for shape in _sub(tensor, _TENSOR_SHAPE):
                for dim in _sub(shape, _SHAPE_DIM):
                    value = _int(dim, _DIM_VALUE)
                    dims.append(value if value is not None else (_text(dim, _DIM_PARAM) or None))
    return TensorInfo(_text(data, _VALUE_NAME), elem, tuple(dims))


def read_graph(model: bytes) -> GraphSummary:
    """The operators, inputs and outputs of the serialized ONNX model ``model``, and anything
    odd it holds (see :class:`GraphSummary`).

    Raises:
        ValueError: ``model`` is not a protobuf message, or holds no graph.
    """
    found = GraphSummary()
    graphs = []
    for number, wire, value in _fields(memoryview(model)):
        if wire != 2:
            continue
        if number == _MODEL_GRAPH:
            graphs.append(cast(memoryview, value))
        elif number == _MODEL_OPSET:
            found.opset_domains.add(_text(cast(memoryview, value), _OPSET_DOMAIN))
        elif number == _MODEL_FUNCTIONS:
            found.odd.append("model-local functions")
        elif number == _MODEL_TRAINING:
            found.odd.append("training information")
    if len(graphs) != 1:
        raise _WireError("no graph" if not graphs else "more than one graph")
    graph = graphs[0]
    initialized = set()
    for tensor in _sub(graph, _GRAPH_INITIALIZER):
        initialized.add(_text(tensor, _TENSOR_NAME))
        problem = _tensor_problem(tensor)
        if problem:
            found.odd.append(problem)
    if any(True for _ in _sub(graph, _GRAPH_SPARSE)):
        found.odd.append("sparse initializers")
    for node in _sub(graph, _GRAPH_NODE):
        op = (_text(node, _NODE_DOMAIN), _text(node, _NODE_OP_TYPE))
        found.ops.add(op)
        for attribute in _sub(node, _NODE_ATTRIBUTE):
            for number, wire, value in _fields(attribute):
                if wire == 2 and number in (_ATTR_GRAPH, _ATTR_GRAPHS):
                    found.odd.append(f"a subgraph in a {op[1]} node")
                elif wire == 2 and number in (_ATTR_TENSOR, _ATTR_TENSORS):
                    problem = _tensor_problem(cast(memoryview, value))
                    if problem:
                        found.odd.append(problem)
    found.inputs = [i for i in map(_value_info, _sub(graph, _GRAPH_INPUT)) if i.name not in initialized]
    found.outputs = [_value_info(o) for o in _sub(graph, _GRAPH_OUTPUT)]
    return found


def check_graph(
    model: bytes,
    *,
    obs_dim: int,
    num_actions: int,
    input_name: str,
    output_name: str,
    where: str,
) -> None:
    """Refuse ``model`` unless it is a bot's graph (see the module docstring): at most
    :data:`MAX_ONNX_BYTES`, operators of :data:`ALLOWED_OPS` only, one float32 input
    ``input_name`` of ``(batch, obs_dim)`` and one float32 output ``output_name`` of
    ``(batch, num_actions)``.

    Raises:
        CorruptBotError: one line naming ``where`` and the first thing found wrong.
    """
    if len(model) > MAX_ONNX_BYTES:
        raise CorruptBotError(
            f"{where}: the ONNX file has {len(model):,} bytes, more than the {MAX_ONNX_BYTES:,} a bot may have"
        )
    try:
        graph = read_graph(model)
    except ValueError as exc:
        raise CorruptBotError(f"{where}: the ONNX file does not parse: {exc}") from None
    if graph.odd:
        raise CorruptBotError(f"{where}: the ONNX graph holds {graph.odd[0]}, which no exported bot has")
    other_domains = sorted((graph.opset_domains | {d for d, _ in graph.ops}) - set(_DEFAULT_DOMAINS))
    if other_domains:
        raise CorruptBotError(
            f"{where}: the ONNX graph uses operators of the domain {other_domains[0]!r}; a bot uses the default ONNX operators only"
        )
    extra = sorted({op for _, op in graph.ops} - ALLOWED_OPS)
    if extra:
        raise CorruptBotError(
            f"{where}: the ONNX graph uses {', '.join(extra)}, outside the operators an exported bot uses "
            f"({', '.join(sorted(ALLOWED_OPS))})"
        )
    _check_io(graph.inputs, "input", input_name, obs_dim, where)
    _check_io(graph.outputs, "output", output_name, num_actions, where)


def _check_io(found: list[TensorInfo], kind: str, name: str, width: int, where: str) -> None:
    wanted = f"one float32 {kind} {name!r} of shape (batch, {width})"
    if len(found) != 1:
        raise CorruptBotError(f"{where}: the ONNX graph has {len(found)} {kind}s; the card says {wanted}")
    info = found[0]
    shape = "(" + ", ".join("?" if d is None else str(d) for d in info.dims) + ")"
    elem = "float32" if info.elem_type == FLOAT else f"element type {info.elem_type}"
    if info.name != name or info.elem_type != FLOAT or len(info.dims) != 2 or info.dims[1] != width:
        raise CorruptBotError(
            f"{where}: the ONNX graph's {kind} is {elem} {info.name!r} of shape {shape}; the card says {wanted}"
        )
