"""gnnc's ops against pure-torch references computed in float64: forward
and gradients, on ragged graphs (empty rows, a hub row, duplicate edges,
odd widths). Runs on CUDA (the real kernels) and, without a GPU, on the CPU
with emulated launches (the Python side only)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

import torch_ref  # noqa: E402
import gnnc  # noqa: E402
from gnnc import GnncError, Graph, ops  # noqa: E402

TOL = {torch.float32: (2e-4, 2e-4), torch.float16: (2e-2, 2e-2),
       torch.bfloat16: (8e-2, 8e-2)}


def ragged_edge_index(n=60, e=500, seed=0, symmetric=False):
    """A hub row (node 1 receives ~30% of the edges), empty rows (the last
    fifth of the nodes receive nothing), duplicate edges."""
    rng = np.random.default_rng(seed)
    dst = np.where(rng.random(e) < 0.3, 1, rng.integers(0, n - n // 5, e))
    src = rng.integers(0, n, e)
    src[:5], dst[:5] = src[5], dst[5]  # duplicates
    ei = np.stack([src, dst])
    if symmetric:
        ei = np.concatenate([ei, ei[::-1]], axis=1)
        ei = np.unique(ei, axis=1)
    return torch.from_numpy(ei)


def make_graph(dev, **kw):
    ei = ragged_edge_index(**kw)
    n = kw.get("n", 60)
    return Graph.from_edge_index(ei.to(dev), n, device=dev), ei


def close(got, want, dtype, scale=None):
    rtol, atol = TOL[dtype]
    want = want.double()
    s = scale if scale is not None else max(1.0, float(want.abs().max()))
    torch.testing.assert_close(got.double(), want, rtol=rtol, atol=atol * s)


def leaf(shape, dev, dtype, seed, positive=False):
    g = torch.Generator().manual_seed(seed)
    t = torch.rand(shape, generator=g, dtype=torch.float64)
    t = t if positive else t * 2 - 1
    return t.to(dtype).to(dev).requires_grad_(True)


def run_both(fn_gnnc, fn_ref, inputs, dev, dtype, seed=1):
    """Forward and backward of gnnc (in dtype) and of the reference (f64 on
    the same values); returns the pairs."""
    y = fn_gnnc(*inputs)
    gen = torch.Generator().manual_seed(seed)
    dy = (torch.rand(y.shape, generator=gen, dtype=torch.float64) * 2 - 1)
    ref_inputs = [None if t is None else t.detach().double().requires_grad_(True)
                  for t in inputs]
    yr = fn_ref(*ref_inputs)
    y.backward(dy.to(dtype).to(dev))
    yr.backward(dy.to(yr.device))
    grads = [(None if t is None else t.grad, None if r is None else r.grad)
             for t, r in zip(inputs, ref_inputs)]
    return (y, yr), grads


# --- spmm ---------------------------------------------------------------------

@pytest.mark.parametrize("reduce,norm,with_values,self_weight", [
    ("sum", "none", False, None), ("sum", "none", True, None),
    ("mean", "none", False, None), ("mean", "none", True, None),
    ("sum", "both", False, None), ("sum", "left", True, None),
    ("sum", "right", False, None), ("sum", "none", False, 0.5),
    ("mean", "none", False, 0.0), ("sum", "both", True, -0.25),
])
@pytest.mark.parametrize("width", [1, 33, 64])
def test_spmm_f32(dev, reduce, norm, with_values, self_weight, width):
    g, _ = make_graph(dev)
    x = leaf((g.num_cols, width), dev, torch.float32, 2)
    v = leaf((g.nnz,), dev, torch.float32, 3) if with_values else None
    rows, cols = g.edge_rows, g.edge_cols
    (y, yr), grads = run_both(
        lambda x, v: ops.spmm(g, x, v, reduce, norm, self_weight),
        lambda x, v: torch_ref.spmm(rows.cpu() if x.device.type == "cpu" else rows,
                                    cols.cpu() if x.device.type == "cpu" else cols,
                                    g.num_rows, x, v, reduce, norm, self_weight),
        [x, v], dev, torch.float32)
    close(y, yr, torch.float32)
    for got, want in grads:
        if want is not None:
            close(got, want, torch.float32)


@pytest.mark.parametrize("reduce,norm,self_weight", [
    ("sum", "none", None), ("mean", "none", None), ("sum", "both", None),
    ("sum", "left", 0.5), ("mean", "none", 0.0)])
def test_spmm_symmetric_gradient_on_the_graph_itself(dev, reduce, norm, self_weight):
    """On a symmetric graph the feature gradient runs over the graph itself
    (no transpose is built) and equals the reference's."""
    g, _ = make_graph(dev, symmetric=True)
    assert g.is_symmetric
    x = leaf((g.num_cols, 33), dev, torch.float32, 4)
    rows, cols = g.edge_rows, g.edge_cols
    (y, yr), grads = run_both(
        lambda x: ops.spmm(g, x, None, reduce, norm, self_weight),
        lambda x: torch_ref.spmm(rows.to(x.device), cols.to(x.device), g.num_rows, x,
                                 None, reduce, norm, self_weight),
        [x], dev, torch.float32)
    close(y, yr, torch.float32)
    close(grads[0][0], grads[0][1], torch.float32)
    assert "T" not in g._derived
    if dev.type == "cuda":
        chosen = g.chosen()
        assert chosen and all(s.startswith("#gnn.schedule<") for s, _ in chosen.values())


def _ref_on(g, x):
    rows, cols = g.edge_rows, g.edge_cols
    return (rows.to(x.device), cols.to(x.device))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("reduce,norm,with_values", [
    ("sum", "none", False), ("mean", "none", True), ("sum", "both", False)])
def test_spmm_half(dev, dtype, reduce, norm, with_values):
    g, _ = make_graph(dev)
    x = leaf((g.num_cols, 40), dev, dtype, 2)
    v = leaf((g.nnz,), dev, dtype, 3) if with_values else None
    (y, yr), grads = run_both(
        lambda x, v: ops.spmm(g, x, v, reduce, norm),
        lambda x, v: torch_ref.spmm(*_ref_on(g, x), g.num_rows, x, v, reduce, norm),
        [x, v], dev, dtype)
    assert y.dtype == dtype
    close(y, yr, dtype)
    for got, want in grads:
        if want is not None:
            assert got.dtype == dtype
            close(got, want, dtype)


@pytest.mark.parametrize("heads,width,dtype", [
    (4, 4, torch.float32),    # 16-byte head rows: strided launches in place
    (4, 8, torch.float16),    # likewise in f16
    (3, 5, torch.float32),    # odd width: per-head copies
    (1, 16, torch.float32)])
def test_spmm_per_head_values(dev, heads, width, dtype):
    g, _ = make_graph(dev)
    x = leaf((g.num_cols, heads, width), dev, dtype, 4)
    a = leaf((g.nnz, heads), dev, dtype, 5, positive=True)
    (y, yr), grads = run_both(
        lambda x, a: ops.spmm(g, x, a),
        lambda x, a: torch_ref.spmm(*_ref_on(g, x), g.num_rows, x, a),
        [x, a], dev, dtype)
    close(y, yr, dtype)
    for got, want in grads:
        close(got, want, dtype)


@pytest.mark.parametrize("with_values", [False, True])
def test_spmm_max(dev, with_values):
    g, _ = make_graph(dev)
    x = leaf((g.num_cols, 9), dev, torch.float32, 6)
    v = leaf((g.nnz,), dev, torch.float32, 7, positive=True) if with_values else None
    (y, yr), grads = run_both(
        lambda x, v: ops.spmm(g, x, v, "max"),
        lambda x, v: torch_ref.spmm(*_ref_on(g, x), g.num_rows, x, v, "max"),
        [x, v], dev, torch.float32)
    close(y, yr, torch.float32)
    assert float(y[g.in_degrees() == 0].abs().sum()) == 0  # empty rows: 0
    for got, want in grads:
        if want is not None:
            close(got, want, torch.float32)


def test_spmm_max_ties_share_the_gradient(dev):
    # Row 0 gets 1 and 2 (equal features): each receives half of dy.
    ei = torch.tensor([[1, 2], [0, 0]])
    g = Graph.from_edge_index(ei.to(dev), 3, device=dev)
    x = torch.tensor([[0.0], [5.0], [5.0]], device=dev, requires_grad=True)
    y = ops.spmm(g, x, reduce="max")
    y.backward(torch.ones_like(y))
    assert x.grad.flatten().tolist() == [0.0, 0.5, 0.5]


def test_spmm_rectangular(dev):
    rp = np.array([0, 2, 2, 5], dtype=np.int64)
    ci = np.array([0, 6, 1, 1, 4], dtype=np.int32)
    g = Graph.from_csr(rp, ci, num_cols=7, device=dev)
    x = leaf((7, 8), dev, torch.float32, 8)
    v = leaf((5,), dev, torch.float32, 9)
    (y, yr), grads = run_both(
        lambda x, v: ops.spmm(g, x, v, "mean", "both"),
        lambda x, v: torch_ref.spmm(*_ref_on(g, x), 3, x, v, "mean", "both"),
        [x, v], dev, torch.float32)
    assert y.shape == (3, 8)
    close(y, yr, torch.float32)
    for got, want in grads:
        close(got, want, torch.float32)


def test_empty_graph(dev):
    g = Graph.from_edge_index(torch.zeros((2, 0), dtype=torch.long), 4, device=dev)
    x = torch.ones(4, 3, device=dev, requires_grad=True)
    y = ops.spmm(g, x, self_weight=1.0)
    assert torch.equal(y, 2 * torch.ones(4, 3, device=dev))
    y.sum().backward()
    assert torch.equal(x.grad, 2 * torch.ones(4, 3, device=dev))


def test_values_in_edge_index_order(dev):
    g, ei = make_graph(dev)
    w = torch.rand(ei.shape[1], device=dev)
    x = torch.rand(g.num_cols, 8, device=dev)
    y = ops.spmm(g, x, w[g.perm])
    want = torch.zeros(g.num_rows, 8, dtype=torch.float64, device=dev).index_add(
        0, ei[1].to(dev), x.double()[ei[0].to(dev)] * w.double()[:, None])
    close(y, want, torch.float32)


# --- sddmm --------------------------------------------------------------------

@pytest.mark.parametrize("form,width,slope", [
    ("dot", 1, None), ("dot", 33, None), ("dot", 64, 0.2),
    ("add", 1, None), ("add", 4, 0.2), ("add", 8, None)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_sddmm(dev, form, width, slope, dtype):
    g, _ = make_graph(dev)
    a = leaf((g.num_rows, width), dev, dtype, 10)
    b = leaf((g.num_cols, width), dev, dtype, 11)
    (y, yr), grads = run_both(
        lambda a, b: ops.sddmm(g, a, b, form, slope),
        lambda a, b: torch_ref.sddmm(*_ref_on(g, a), a, b, form, slope),
        [a, b], dev, dtype)
    close(y, yr, dtype)
    for got, want in grads:
        close(got, want, dtype)


def test_sddmm_add_vectors(dev):
    g, _ = make_graph(dev)
    a = leaf((g.num_rows,), dev, torch.float32, 12)
    b = leaf((g.num_cols,), dev, torch.float32, 13)
    (y, yr), grads = run_both(
        lambda a, b: ops.sddmm(g, a, b, "add", 0.2),
        lambda a, b: torch_ref.sddmm(*_ref_on(g, a), a, b, "add", 0.2),
        [a, b], dev, torch.float32)
    assert y.shape == (g.nnz,)
    close(y, yr, torch.float32)
    for got, want in grads:
        close(got, want, torch.float32)


# --- GAT's attention in one kernel ---------------------------------------------

@pytest.mark.parametrize("heads,width", [(None, 16), (3, 8), (2, 5)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("slope", [0.2, None])
def test_gat_attention(dev, heads, width, dtype, slope):
    g, _ = make_graph(dev)
    hs = [] if heads is None else [heads]
    x = leaf([g.num_cols] + hs + [width], dev, dtype, 20)
    d = leaf([g.num_rows] + hs, dev, dtype, 21)
    s = leaf([g.num_cols] + hs, dev, dtype, 22)

    def ref(x, d, s):
        rows, cols = _ref_on(g, x)
        logits = torch_ref.sddmm(rows, cols, d * 4, s * 4, "add", slope)
        alpha = torch_ref.edge_softmax(rows, g.num_rows, logits)
        return torch_ref.spmm(rows, cols, g.num_rows, x, alpha)

    def ours(x, d, s):
        return ops.gat_attention(g, x, d * 4, s * 4, slope)

    # Inference: the fused kernel (scores times 4: a softmax far from
    # uniform), the empty rows 0.
    with torch.no_grad():
        y = ours(x, d, s)
    assert y.shape == (g.num_rows, *x.shape[1:])
    close(y, ref(x.detach().double(), d.detach().double(), s.detach().double()), dtype)
    # Training: the differentiable chain, the same values.
    (y2, yr), grads = run_both(ours, ref, [x, d, s], dev, dtype)
    close(y2, yr, dtype)
    close(y2, y, dtype)
    for got, want in grads:
        close(got, want, dtype)


def test_gat_attention_checks_shapes(dev):
    g, _ = make_graph(dev)
    x = torch.zeros(g.num_cols, 2, 8, device=dev)
    with pytest.raises(ValueError, match="att_src must have shape"):
        ops.gat_attention(g, x, torch.zeros(g.num_rows, 2, device=dev),
                          torch.zeros(g.num_cols, 3, device=dev))


# --- edge softmax -------------------------------------------------------------

@pytest.mark.parametrize("heads", [None, 1, 4])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_edge_softmax(dev, heads, dtype):
    g, _ = make_graph(dev)
    shape = (g.nnz,) if heads is None else (g.nnz, heads)
    x = leaf(shape, dev, dtype, 14)
    (y, yr), grads = run_both(
        lambda x: ops.edge_softmax(g, x),
        lambda x: torch_ref.edge_softmax(_ref_on(g, x)[0], g.num_rows, x),
        [x], dev, dtype)
    close(y, yr, dtype, scale=1.0)
    close(grads[0][0], grads[0][1], dtype, scale=1.0)


# --- the reference itself -----------------------------------------------------

def test_reference_gradcheck():
    ei = ragged_edge_index(n=12, e=40)
    rows, cols = ei[1], ei[0]
    order = torch.argsort(rows * 100 + cols)
    rows, cols = rows[order], cols[order]
    x = torch.rand(12, 3, dtype=torch.float64, requires_grad=True)
    v = torch.rand(40, dtype=torch.float64, requires_grad=True)
    for reduce, norm in [("sum", "none"), ("mean", "both"), ("sum", "right")]:
        torch.autograd.gradcheck(
            lambda x, v: torch_ref.spmm(rows, cols, 12, x, v, reduce, norm, 0.3), (x, v))
    a = torch.rand(12, 4, dtype=torch.float64, requires_grad=True)
    b = torch.rand(12, 4, dtype=torch.float64, requires_grad=True)
    torch.autograd.gradcheck(lambda a, b: torch_ref.sddmm(rows, cols, a, b, "add", 0.2), (a, b))
    torch.autograd.gradcheck(lambda a, b: torch_ref.sddmm(rows, cols, a, b, "dot"), (a, b))
    logits = torch.rand(40, 2, dtype=torch.float64, requires_grad=True)
    torch.autograd.gradcheck(lambda l: torch_ref.edge_softmax(rows, 12, l), (logits,))
    out = torch_ref.edge_softmax(rows, 12, logits)
    grad = torch.rand_like(out)
    want, = torch.autograd.grad(out, logits, grad)
    torch.testing.assert_close(torch_ref.edge_softmax_grad(rows, 12, out.detach(), grad), want)


# --- graphs -------------------------------------------------------------------

def test_graph_derived(dev):
    g, ei = make_graph(dev)
    t = g.T
    assert (t.num_rows, t.num_cols, t.nnz) == (g.num_cols, g.num_rows, g.nnz)
    assert torch.equal(g.edge_rows[g.t2f], t.edge_cols)
    assert torch.equal(g.edge_cols[g.t2f], t.edge_rows)
    assert not g.is_symmetric
    gs, _ = make_graph(dev, symmetric=True)
    assert gs.is_symmetric
    sl = g.add_self_loops()
    assert sl.nnz == int((ei[0] != ei[1]).sum()) + g.num_nodes
    assert bool((sl.in_degrees() >= 1).all())
    assert g.add_self_loops() is sl
    assert g.row_edge_graph.num_cols == g.nnz and g.col_edge_graph.num_rows == g.num_cols


def test_graph_cache(dev):
    from gnnc.graph import cached_graph, graph_cache
    ei = ragged_edge_index().to(dev)
    a = cached_graph(ei, 60, "self_loops")
    assert cached_graph(ei, 60, "self_loops") is a
    assert cached_graph(ei, 60) is not a
    ei[0, 0] = 2  # in place: the version changes
    assert cached_graph(ei, 60, "self_loops") is not a


# --- errors -------------------------------------------------------------------

def test_argument_errors(dev):
    g, _ = make_graph(dev)
    x = torch.rand(g.num_cols, 8, device=dev)
    with pytest.raises(ValueError, match=r"x must have shape \[60, \*\]"):
        ops.spmm(g, x[:10])
    with pytest.raises(TypeError, match="values has dtype torch.float16"):
        ops.spmm(g, x, torch.rand(g.nnz, device=dev).half())
    with pytest.raises(ValueError, match=rf"values must have shape \[{g.nnz}\]"):
        ops.spmm(g, x, torch.rand(g.nnz + 1, device=dev))
    with pytest.raises(TypeError, match="float64"):
        ops.spmm(g, x.double())
    with pytest.raises(ValueError, match="reduce must be"):
        ops.spmm(g, x, reduce="min")
    with pytest.raises(ValueError, match="b must have shape"):
        ops.sddmm(g, x, x[:, :4])
    with pytest.raises(TypeError, match="expected a gnnc.Graph"):
        ops.spmm(object(), x)
    # A non-contiguous x just works.
    xt = torch.rand(8, g.num_cols, device=dev).t()
    close(ops.spmm(g, xt), torch_ref.spmm(*_ref_on(g, xt), g.num_rows, xt.double()),
          torch.float32)


def test_cuda_only_errors(dev):
    if dev.type != "cuda":
        pytest.skip("device placement errors need a CUDA graph")
    g, _ = make_graph(dev)
    with pytest.raises(ValueError, match="x is on cpu; gnnc kernels run on CUDA"):
        ops.spmm(g, torch.rand(g.num_cols, 4))
    with pytest.raises(GnncError, match="schedule"):
        g.kernel_schedule("spmm", 64, torch.float32, schedule="#gnn.schedule<vector_width = 8>")


def test_kernel_schedule(dev):
    if dev.type != "cuda":
        pytest.skip("kernels are compiled on a GPU machine")
    g, _ = make_graph(dev)
    sched, source = g.kernel_schedule("spmm", 64, torch.float16, reduce="mean")
    assert sched.startswith("#gnn.schedule<") and source in (
        "written", "database", "cost model", "measured", "default")
    sched, source = g.kernel_schedule("spmm", 64, torch.float32,
                                      schedule="#gnn.schedule<vector_width = 4>")
    assert source == "written"


# --- torch.compile --------------------------------------------------------------

def test_torch_compile(dev):
    g, _ = make_graph(dev)
    lin = torch.nn.Linear(16, 8).to(dev)

    def model(x, a):
        h = ops.spmm(g, lin(x), norm="both")
        logits = ops.sddmm(g, a, a, "add", 0.2)
        alpha = ops.edge_softmax(g, logits)
        return ops.spmm(g, h.view(-1, 2, 4), alpha).sum()

    backend = "inductor" if dev.type == "cuda" else "aot_eager"
    compiled = torch.compile(model, backend=backend, fullgraph=False)
    x = torch.rand(g.num_rows, 16, device=dev, requires_grad=True)
    a = torch.rand(g.num_rows, 2, device=dev, requires_grad=True)
    want = model(x, a)
    want.backward()
    gx, ga = x.grad.clone(), a.grad.clone()
    x.grad = a.grad = None
    got = compiled(x, a)
    got.backward()
    close(got, want.detach(), torch.float32)
    close(x.grad, gx, torch.float32)
    close(a.grad, ga, torch.float32)


def test_opcheck(dev):
    """torch.library.opcheck: schemas, fake implementations, autograd
    registration."""
    g, _ = make_graph(dev)
    x = torch.rand(g.num_cols, 8, device=dev, requires_grad=True)
    v = torch.rand(g.nnz, device=dev, requires_grad=True)
    tests = ["test_schema", "test_faketensor", "test_autograd_registration"]
    torch.library.opcheck(torch.ops.gnnc.spmm.default, (g.id, x, v, "sum", "both", None),
                          test_utils=tests)
    a = torch.rand(g.num_rows, 4, device=dev, requires_grad=True)
    torch.library.opcheck(torch.ops.gnnc.sddmm.default, (g.id, a, a, "add", 0.2),
                          test_utils=tests)
    torch.library.opcheck(torch.ops.gnnc.edge_softmax.default,
                          (g.id, torch.rand(g.nnz, 2, device=dev, requires_grad=True)),
                          test_utils=tests)


@pytest.mark.parametrize("fold", [False, True])
@pytest.mark.parametrize("reduce,norm,with_values,self_weight", [
    ("mean", "none", False, None), ("sum", "both", False, None),
    ("sum", "left", True, None), ("sum", "right", False, 0.5), ("mean", "both", True, 0.0)])
def test_spmm_scaling_in_kernel_or_folded(dev, monkeypatch, fold, reduce, norm,
                                          with_values, self_weight):
    """With FOLD_SCALING off (the default), the kernels scale by degrees
    themselves (and the feature gradient runs gnnc_spmm_feature_grad_op's
    scaled op); on, the factors are folded into edge values."""
    monkeypatch.setattr(ops, "FOLD_SCALING", fold)
    g, _ = make_graph(dev)
    x = leaf((g.num_cols, 24), dev, torch.float32, 2)
    v = leaf((g.nnz,), dev, torch.float32, 3) if with_values else None
    (y, yr), grads = run_both(
        lambda x, v: ops.spmm(g, x, v, reduce, norm, self_weight),
        lambda x, v: torch_ref.spmm(*_ref_on(g, x), g.num_rows, x, v, reduce, norm,
                                    self_weight),
        [x, v], dev, torch.float32)
    close(y, yr, torch.float32)
    for got, want in grads:
        if want is not None:
            close(got, want, torch.float32)


def test_measured_choice(dev):
    """With measuring on, a kernel's schedule is the fastest timed one."""
    if dev.type != "cuda":
        pytest.skip("schedules are timed on a GPU")
    from gnnc import _context
    ctx = _context.get(dev.index)
    before = ctx.measure
    ctx.set_measure(3)
    try:
        g, _ = make_graph(dev, seed=7)
        sched, source = g.kernel_schedule("spmm", 40, torch.float32, norm="both")
        assert source == "measured", (sched, source)
        x = leaf((g.num_cols, 40), dev, torch.float32, 5)
        y = ops.spmm(g, x, norm="both")
        rows, cols = g.edge_rows, g.edge_cols
        close(y, torch_ref.spmm(rows, cols, g.num_rows, x.detach().double(), None, "sum",
                                "both", None), torch.float32)
    finally:
        ctx.set_measure(before)


def test_measure_setting_errors():
    from gnnc import _context
    import os
    old = os.environ.get("GNNC_TUNE_MEASURE")
    try:
        os.environ["GNNC_TUNE_MEASURE"] = "many"
        with pytest.raises(ValueError, match="GNNC_TUNE_MEASURE"):
            _context.measure_top_k()
        os.environ["GNNC_TUNE_MEASURE"] = ""
        assert _context.measure_top_k() == _context.DEFAULT_MEASURE_TOP_K
    finally:
        if old is None:
            os.environ.pop("GNNC_TUNE_MEASURE", None)
        else:
            os.environ["GNNC_TUNE_MEASURE"] = old
