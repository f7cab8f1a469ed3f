"""Borrowed views of arrays for the time loops: the same data without a reference count.

Numba counts a reference of every array a compiled function binds, passes or receives: each
call of a compiled helper with ``k`` arrays among its arguments (a tuple counts each of its
arrays) adds and removes ``k`` references, each an atomic instruction on the array's owner.
On processors where an atomic instruction is slow this dominated the steps: on a 2-core Intel
Xeon (Emerald Rapids) VM the reference counts were a third of a flexible slider-crank step
(benchmarks/README.md, "Reference counts"). A time loop passes its arrays to the same helpers
thousands of times.

:func:`borrow` returns a view of an array, or of a (nested) tuple of them, whose owner field
is empty: numba's reference counting skips such an array (it tests the owner for null before
the atomic instruction). The view does not keep its data alive, so it is only for use inside
the compiled call that made it, while its caller holds the arrays; a borrowed array must
never be returned, stored in an array that outlives the call, or handed to Python. The time
loops borrow their arguments once, on entry.
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["borrow"]


def _borrowed(context, builder, ty, value):
    """The LLVM value of ``value`` (numba type ``ty``) with every array's owner cleared; other
    values are passed on with the reference the result holds."""
    if isinstance(ty, types.Array):
        src = context.make_array(ty)(context, builder, value)
        out = context.make_array(ty)(context, builder)
        for name in ("nitems", "itemsize", "data", "shape", "strides"):
            setattr(out, name, getattr(src, name))
        out.meminfo = cgutils.get_null_value(out.meminfo.type)
        out.parent = cgutils.get_null_value(out.parent.type)
        return out._getvalue()
    if isinstance(ty, types.BaseTuple):
        items = [
            _borrowed(context, builder, t, builder.extract_value(value, i))
            for i, t in enumerate(ty)
        ]
        return context.make_tuple(builder, ty, items)
    context.nrt.incref(builder, ty, value)  # the result is a new reference
    return value


@intrinsic
def borrow(typingctx, x):
    """``x`` (an array, or a tuple of arrays, tuples and other values) with its arrays replaced by
    borrowed views: same type, data, shape and strides, no reference count (module docstring).
    Compiled code only."""

    def codegen(context, builder, sig, args):
        return _borrowed(context, builder, sig.args[0], args[0])

    return x(x), codegen
