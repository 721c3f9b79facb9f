"""The walk over a roll's keeps in a carry-over lane pass, every lane at once in one vector.

:func:`greed_env.solver.lane_kernel.lane_rows` keeps its lanes in scalars (numba keeps a small
array in memory), and numba compiles with LLVM's SLP vectorizer off, which would otherwise
join the lanes' identical operations; this intrinsic writes that loop's vector code itself.
Lane by lane it does the same comparisons and selects, so the values are the same bits.
Progressive, one block of four lanes at score 40 of the full grid: 1.25 -> 0.64 ms per lane.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["best_keeps"]


@intrinsic
def best_keeps(typingctx: Any, cd: Any, kw: Any, o_lo: Any, o_hi: Any, rw: Any, init: Any) -> Any:
    """``(b_0 .. b_{L-1}, h_0 .. h_{L-1})``: the best value after keep ``o`` (``o_lo <= o <
    o_hi``) of each of ``L`` lanes and its slope, starting from ``init`` (same layout), a keep
    replacing the best only where its value is larger (the first best keep wins).

    Keep ``o``'s node starts at ``cd[rw + kw[o]]``: ``L`` values, then ``L`` slopes. The lanes
    are compared as one vector; ``kw`` holds unsigned offsets in doubles (no test for a
    negative index), ``o_lo`` and ``o_hi`` are integers.
    """
    if not isinstance(init, types.UniTuple) or init.count % 2 or init.dtype != types.float64:
        return None
    lanes = init.count // 2
    sig = init(cd, kw, o_lo, o_hi, rw, init)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        cd_v, kw_v, lo_v, hi_v, rw_v, init_v = args
        cd_data = context.make_array(signature.args[0])(context, builder, cd_v).data
        kw_data = context.make_array(signature.args[1])(context, builder, kw_v).data
        f64 = ir.DoubleType()
        vec = ir.VectorType(f64, lanes)
        i64 = ir.IntType(64)
        b = ir.Constant(vec, ir.Undefined)
        h = ir.Constant(vec, ir.Undefined)
        for i in range(lanes):
            b = builder.insert_element(b, builder.extract_value(init_v, i), ir.Constant(i64, i))
            h = builder.insert_element(h, builder.extract_value(init_v, lanes + i), ir.Constant(i64, i))
        b_ptr = cgutils.alloca_once(builder, vec)
        h_ptr = cgutils.alloca_once(builder, vec)
        builder.store(b, b_ptr)
        builder.store(h, h_ptr)
        lo = context.cast(builder, lo_v, signature.args[2], types.int64)
        hi = context.cast(builder, hi_v, signature.args[3], types.int64)
        base = context.cast(builder, rw_v, signature.args[4], types.uint64)
        with cgutils.for_range_slice(builder, lo, hi, ir.Constant(i64, 1), inc=True) as (o, _):
            k = builder.load(builder.gep(kw_data, [o]))
            j = builder.add(base, k)
            pt = builder.bitcast(builder.gep(cd_data, [j]), vec.as_pointer())
            py = builder.bitcast(builder.gep(cd_data, [builder.add(j, ir.Constant(i64, lanes))]), vec.as_pointer())
            t = builder.load(pt, align=8)
            y = builder.load(py, align=8)
            bo = builder.load(b_ptr)
            ho = builder.load(h_ptr)
            m = builder.fcmp_ordered(">", t, bo)
            builder.store(builder.select(m, t, bo), b_ptr)
            builder.store(builder.select(m, y, ho), h_ptr)
        b = builder.load(b_ptr)
        h = builder.load(h_ptr)
        out = [builder.extract_element(b, ir.Constant(i64, i)) for i in range(lanes)]
        out += [builder.extract_element(h, ir.Constant(i64, i)) for i in range(lanes)]
        return context.make_tuple(builder, signature.return_type, out)

    return sig, codegen
