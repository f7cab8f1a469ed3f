"""ancf_beam.borrow: views of arrays without an owner, so numba counts no reference of them.

The property that saves the time (an empty owner field) is read from the compiled value by a
small intrinsic; the views' shape, strides and data are checked against NumPy over drawn
arrays, contiguous or not; a write through a view must reach the original.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from ancf_beam.borrow import borrow


@intrinsic
def _owner(typingctx, arr):
    """The address of an array's owner (numba's meminfo), 0 when it has none."""

    def codegen(context, builder, sig, args):
        a = context.make_array(sig.args[0])(context, builder, args[0])
        return builder.ptrtoint(a.meminfo, ir.IntType(64))

    return types.int64(arr), codegen


@njit
def _owners(x, y):
    b = borrow((x, (y, 3.5)))
    return _owner(x), _owner(y), _owner(b[0]), _owner(b[1][0]), b[1][1]


def test_borrowed_arrays_have_no_owner_and_other_values_pass():
    x, y = np.arange(5.0), np.zeros((2, 3), dtype=np.int64)
    ox, oy, bx, by, s = _owners(x, y)
    assert ox != 0 and oy != 0  # an array from Python has an owner: counted references
    assert bx == 0 and by == 0  # its borrowed view has none, nested tuples included
    assert s == 3.5


@njit
def _view_facts(x):
    b = borrow(x)
    total = 0.0
    for idx in np.ndindex(b.shape):
        total += b[idx]
        b[idx] += 1.0
    return b.shape, b.strides, total


_arrays = hnp.arrays(
    np.float64,
    hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6),
    elements=st.floats(-1e3, 1e3, allow_nan=False),
)


@settings(max_examples=60, deadline=None)
@given(a=_arrays, step=st.integers(1, 3), transpose=st.booleans())
def test_borrowed_view_is_the_array(a, step, transpose):
    """Same shape, strides and data as the array it borrows, also for strided and transposed
    views; a write through it reaches the original."""
    x = a[::step]
    x = x.T if transpose else x
    before = x.copy()
    shape, strides, total = _view_facts(x)
    assert shape == x.shape and strides == x.strides
    assert total == sum(before[idx] for idx in np.ndindex(before.shape))  # same order
    np.testing.assert_array_equal(x, before + 1.0)


class _Pair(NamedTuple):
    u: np.ndarray
    k: int


@njit
def _named(p):
    b = borrow(p)
    b.u[0] = b.k
    return _owner(b.u), b.k


def test_named_tuples_keep_their_fields():
    p = _Pair(np.zeros(3), 7)
    owner, k = _named(p)
    assert owner == 0 and k == 7 and p.u[0] == 7.0
