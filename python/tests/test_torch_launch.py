"""The launch path down to the C ABI, without a GPU: the library's launch,
graph and kernel functions replaced by Python stubs that record what they
are passed (kernels, gnnc_buffers, streams, the device guard), on a graph
that lives on the CPU. And the eager fast path against the custom ops'
dispatcher: the same results and gradients."""
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

from gnnc import GnncError, Graph, _context, _lib, ops  # noqa: E402
from gnnc import graph as ggraph  # noqa: E402
from gnnc._desc import OpSpec  # noqa: E402
from gnnc._lib import OpKind  # noqa: E402


def _lib_or_skip():
    try:
        return _lib.load()
    except _lib.GnncError as e:
        pytest.skip(f"libgnnc_c.so not available: {e}")


class Recorder:
    """The real library, with graph and kernel creation and the launches
    recorded instead of run."""

    def __init__(self, real):
        self._real = real
        self._ids = itertools.count(100)
        self.specs = {}
        self.calls = []
        self.status = 0

    def __getattr__(self, name):
        return getattr(self._real, name)

    def gnnc_graph_create(self, ctx, name, rows, cols, nnz, rp, ci, brp, bci, out):
        out._obj.value = next(self._ids)
        return 0

    def gnnc_graph_destroy(self, graph):
        pass

    def gnnc_kernel_get(self, graph, desc, schedule, out):
        k = next(self._ids)
        self.specs[k] = OpSpec.from_struct(desc._obj)
        out._obj.value = k
        return 0

    def _launch(name):
        def launch(self, kernel, *args):
            *buffers, stream = args
            self.calls.append((name, self.specs[kernel.value],
                               [(b.address, b.bytes) for b in buffers], stream))
            return self.status
        return launch

    gnnc_spmm = _launch("spmm")
    gnnc_sddmm = _launch("sddmm")
    gnnc_edge_softmax = _launch("edge_softmax")
    gnnc_edge_softmax_grad = _launch("edge_softmax_grad")


class _Ctx:
    handle = None


@pytest.fixture
def rec(monkeypatch):
    r = Recorder(_lib_or_skip())
    monkeypatch.setattr(_lib, "_lib", r)
    monkeypatch.setattr(_context, "get", lambda device: _Ctx())
    monkeypatch.setattr(ggraph, "_allow_cpu", True)
    monkeypatch.setattr(torch.cuda, "init", lambda: None)
    monkeypatch.setattr(ops, "_cuda_current_device", lambda: -1)
    monkeypatch.setattr(ops, "_cuda_raw_stream", lambda index: 4242 + index)
    return r


def buf(t):
    """gnnc_buffer of a tensor as the C ABI wants it: its address, and the
    bytes from there to the end of its storage."""
    s = t.untyped_storage()
    return (t.data_ptr(), s.data_ptr() + s.nbytes() - t.data_ptr())


def graph(n=30, e=120, seed=0):
    rng = np.random.default_rng(seed)
    ei = torch.from_numpy(rng.integers(0, n, (2, e)))
    return Graph.from_edge_index(ei, n, device="cpu")


def test_spmm_launch_arguments(rec):
    g = graph()
    x = torch.randn(g.num_cols, 8)
    y = ops.spmm(g, x)
    ((name, spec, buffers, stream),) = rec.calls
    assert name == "spmm" and stream == 4242 - 1
    assert spec == OpSpec.spmm(spec.dtype, 8)
    assert buffers == [buf(x), (0, 0), buf(y)]
    # A view in the middle of a larger storage: the bytes to its end.
    base = torch.randn(g.num_cols + 5, 8)
    ops.spmm(g, base[2:2 + g.num_cols], torch.ones(g.nnz), norm="none")
    _, spec, buffers, _ = rec.calls[-1]
    assert spec.edge_values and buffers[0] == buf(base[2:2 + g.num_cols])
    # The same op again: the same kernel, no new kernel_get.
    n_kernels = len(rec.specs)
    ops.spmm(g, x)
    assert len(rec.specs) == n_kernels and rec.calls[-1][1] is rec.calls[0][1]


def test_spmm_backward_launches_the_gradient_op(rec):
    g = graph()
    x = torch.randn(g.num_cols, 4, requires_grad=True)
    ops.spmm(g, x, self_weight=0.5).backward(torch.ones(g.num_rows, 4))
    (_, fwd, _, _), (_, bwd, buffers, _) = rec.calls
    assert bwd == OpSpec.spmm(fwd.dtype, 4, self_weight=0.5).feature_grad()
    assert buffers[1] == (0, 0)


def test_per_head_launches(rec):
    g = graph()
    heads, width = 3, 4
    # A spare row after x's rows: its heads are read in place (no copy).
    x = torch.randn(g.num_cols + 1, heads, width)[:g.num_cols]
    v = torch.rand(g.nnz, heads)
    y = ops.spmm(g, x, v)
    assert [c[0] for c in rec.calls] == ["spmm"] * heads
    for h, (_, spec, (bx, bv, by), _) in enumerate(rec.calls):
        assert spec.row_stride == heads * width and spec.width == width
        assert bx[0] == x.data_ptr() + h * width * 4
        assert bx[1] >= (g.num_cols * heads * width - h * width + width) * 4
        assert by[0] == y.data_ptr() + h * width * 4
        # Each head's values contiguous, one after the other.
        assert bv[1] == (heads - h) * g.nnz * 4
        assert bv[0] == rec.calls[0][2][1][0] + h * g.nnz * 4


def test_sddmm_and_edge_softmax_launches(rec):
    g = graph()
    a, b = torch.randn(g.num_rows, 2), torch.randn(g.num_cols, 2)
    logits = ops.sddmm(g, a, b, form="add", leaky_relu=0.2)
    alpha = ops.edge_softmax(g, logits)
    (n1, s1, b1, _), (n2, s2, b2, _) = rec.calls
    assert (n1, s1.kind, s1.form.name, s1.leaky_relu) == ("sddmm", OpKind.SDDMM, "ADD", 0.2)
    assert b1 == [buf(a), buf(b), buf(logits)]
    assert (n2, s2.kind, s2.width) == ("edge_softmax", OpKind.EDGE_SOFTMAX, 2)
    assert b2 == [buf(logits), buf(alpha)]


def test_device_guard_when_another_device_is_current(rec, monkeypatch):
    entered = []

    class Guard:
        def __init__(self, index):
            self.index = index

        def __enter__(self):
            entered.append(self.index)

        def __exit__(self, *exc):
            entered.append("exit")

    monkeypatch.setattr(ops, "_cuda_current_device", lambda: 3)
    monkeypatch.setattr(torch.cuda, "device", Guard)
    g = graph()
    ops.spmm(g, torch.randn(g.num_cols, 4))
    assert entered == [g._device_index, "exit"]


def test_launch_failure_raises(rec):
    g = graph()
    rec.status = 1
    with pytest.raises(GnncError, match="^spmm"):
        ops.spmm(g, torch.randn(g.num_cols, 4))


@pytest.mark.parametrize("case", ["spmm", "spmm_mean_values", "spmm_heads", "spmm_heads_odd",
                                  "sddmm_dot", "sddmm_add", "edge_softmax"])
def test_fast_path_matches_dispatcher(dev, monkeypatch, case):
    """The eager fast path and the custom ops' dispatcher: equal outputs and
    gradients."""
    rng = np.random.default_rng(3)
    n = 40
    ei = torch.from_numpy(rng.integers(0, n, (2, 300))).to(dev)
    g = Graph.from_edge_index(ei, n, device=dev)

    def leaf(*shape, seed):
        gen = torch.Generator().manual_seed(seed)
        return torch.rand(*shape, generator=gen).to(dev).requires_grad_(True)

    def run():
        if case == "spmm":
            ins = [leaf(n, 8, seed=1)]
            out = ops.spmm(g, ins[0], self_weight=0.25)
        elif case == "spmm_mean_values":
            ins = [leaf(n, 8, seed=1), leaf(g.nnz, seed=2)]
            out = ops.spmm(g, ins[0], ins[1], reduce="mean", norm="right")
        elif case in ("spmm_heads", "spmm_heads_odd"):
            w = 4 if case == "spmm_heads" else 3
            ins = [leaf(n, 2, w, seed=1), leaf(g.nnz, 2, seed=2)]
            out = ops.spmm(g, ins[0], ins[1])
        elif case == "sddmm_dot":
            ins = [leaf(n, 8, seed=1), leaf(n, 8, seed=2)]
            out = ops.sddmm(g, ins[0], ins[1])
        elif case == "sddmm_add":
            ins = [leaf(n, 2, seed=1), leaf(n, 2, seed=2)]
            out = ops.sddmm(g, ins[0], ins[1], form="add", leaky_relu=0.2)
        else:
            ins = [leaf(g.nnz, 2, seed=1)]
            out = ops.edge_softmax(g, ins[0])
        gen = torch.Generator().manual_seed(9)
        out.backward(torch.rand(out.shape, generator=gen).to(dev))
        return out.detach(), [t.grad for t in ins]

    monkeypatch.setattr(ops, "EAGER_FAST_PATH", True)
    fast = run()
    monkeypatch.setattr(ops, "EAGER_FAST_PATH", False)
    slow = run()
    assert torch.equal(fast[0], slow[0])
    for a, b in zip(fast[1], slow[1]):
        assert torch.equal(a, b)
