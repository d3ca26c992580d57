"""gnnc.segment_matmul against a float64 per-type loop of torch matmuls:
values and gradients (inputs and weights), ragged segments (types of 0, 1
and hundreds of rows, an empty type first and last), many types, no rows;
f32 exact and TF32, f16, bf16; ptr on the CPU and on the device; the
layout cache; errors. On CUDA the kernels run; without a GPU the launches
are emulated on the CPU (emulate_segment.py) to check the Python side."""
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

import gnnc  # noqa: E402
from gnnc import segment  # noqa: E402

# (dtype, allow_tf32, relative tolerance of each output's term magnitude):
# the inputs are drawn in the dtype, so the reference sees the same values;
# what differs is TF32's input rounding (2^-10 of each product) and the
# rounding of the result to 16 bits.
MATHS = {
    "f32": (torch.float32, False, 1e-5),
    "tf32": (torch.float32, True, 2.0 ** -9),
    "f16": (torch.float16, False, 2.0 ** -9),
    "bf16": (torch.bfloat16, False, 2.0 ** -6),
}

RAGGED = [0, 0, 1, 301, 301, 303, 303]


@pytest.fixture
def sdev(dev, monkeypatch):
    if dev.type == "cpu":
        import emulate_segment
        emulate_segment.install(monkeypatch)
    segment.clear_cache()
    return dev


@pytest.fixture
def tf32_setting():
    saved = torch.backends.cuda.matmul.allow_tf32
    yield
    torch.backends.cuda.matmul.allow_tf32 = saved


def reference(x, ptr, w):
    """The per-type loop in float64, and the magnitudes |x| |w|."""
    out = torch.zeros(x.shape[0], w.shape[2], dtype=torch.float64)
    mag = torch.zeros_like(out)
    for t in range(w.shape[0]):
        a, b = int(ptr[t]), int(ptr[t + 1])
        out[a:b] = x[a:b].double().cpu() @ w[t].double().cpu()
        mag[a:b] = x[a:b].double().abs().cpu() @ w[t].double().abs().cpu()
    return out, mag


def assert_close(got, expected, magnitude, tol, what):
    got = got.double().cpu()
    err = (got - expected).abs()
    allowed = tol * magnitude + 1e-30
    bad = ~(err <= allowed)
    assert not bool(bad.any()), (
        f"{what}: {int(bad.sum())} of {got.numel()} differ, worst error "
        f"{float(err.max()):.3g} (allowed {tol:.3g} of the magnitude)")


def run_case(dev, offsets, k, m, math, ptr_on_device=False, seed=0):
    dtype, tf32, tol = MATHS[math]
    torch.backends.cuda.matmul.allow_tf32 = tf32
    g = torch.Generator().manual_seed(seed)
    n, t = offsets[-1], len(offsets) - 1
    x = torch.randn(n, k, generator=g).to(dtype).to(dev).requires_grad_()
    w = torch.randn(t, k, m, generator=g).to(dtype).to(dev).requires_grad_()
    dy = torch.randn(n, m, generator=g).to(dtype).to(dev)
    ptr = torch.tensor(offsets, dtype=torch.int64)
    if ptr_on_device:
        ptr = ptr.to(dev)
    y = gnnc.segment_matmul(x, ptr, w)
    assert y.shape == (n, m) and y.dtype == dtype and y.device == x.device
    expected, mag = reference(x.detach(), ptr.cpu(), w.detach())
    assert_close(y.detach(), expected, mag, tol, f"{math} forward")
    y.backward(dy)
    # dx = dy W_t^T, dW_t = x_t^T dy_t.
    wt = w.detach().transpose(1, 2)
    ex, mx = reference(dy, ptr.cpu(), wt)
    assert_close(x.grad, ex, mx, tol, f"{math} input gradient")
    ew = torch.zeros(t, k, m, dtype=torch.float64)
    mw = torch.zeros_like(ew)
    xd, dyd = x.detach().double().cpu(), dy.double().cpu()
    for i in range(t):
        a, b = offsets[i], offsets[i + 1]
        ew[i] = xd[a:b].t() @ dyd[a:b]
        mw[i] = xd[a:b].abs().t() @ dyd[a:b].abs()
    assert_close(w.grad, ew, mw, tol, f"{math} weight gradient")
    if t and offsets[1] == offsets[0]:
        assert bool((w.grad[0] == 0).all()), "a type without rows has a zero gradient"


@pytest.mark.parametrize("math", list(MATHS))
@pytest.mark.parametrize("k,m", [(64, 32), (33, 17)])
def test_ragged_values_and_gradients(sdev, tf32_setting, math, k, m):
    run_case(sdev, RAGGED, k, m, math, seed=k * m)


@pytest.mark.parametrize("math", list(MATHS))
def test_many_types_ptr_on_device(sdev, tf32_setting, math):
    g = torch.Generator().manual_seed(5)
    sizes = torch.randint(0, 40, (120,), generator=g).tolist()
    offsets = [0]
    for s in sizes:
        offsets.append(offsets[-1] + s)
    run_case(sdev, offsets, 128, 64, math, ptr_on_device=True, seed=3)


@pytest.mark.parametrize("math", ["tf32", "f16", "bf16"])
def test_wide_weights_on_tensor_cores(sdev, tf32_setting, math):
    run_case(sdev, [0, 5, 700, 700, 900], 256, 256, math, seed=9)


@pytest.mark.parametrize("offsets", [[0, 777], [0, 1], [0, 0, 0]])
def test_one_type_and_no_rows(sdev, tf32_setting, offsets):
    run_case(sdev, offsets, 32, 32, "f32", seed=len(offsets))


def test_exact_f32_of_wide_weights_says_why(sdev, tf32_setting):
    torch.backends.cuda.matmul.allow_tf32 = False
    x = torch.randn(10, 256, device=sdev)
    w = torch.randn(2, 256, 256, device=sdev)
    with pytest.raises(gnnc.GnncError, match="shared memory"):
        gnnc.segment_matmul(x, torch.tensor([0, 4, 10]), w)


def test_layout_cache(sdev):
    x = torch.randn(10, 8, device=sdev)
    w = torch.randn(2, 8, 8, device=sdev)
    ptr = torch.tensor([0, 4, 10])
    gnnc.segment_matmul(x, ptr, w)
    first = segment.cached_segments(ptr, 10, x.device)
    assert segment.cached_segments(ptr, 10, x.device) is first
    # The same offsets in a new tensor: the same layout.
    assert segment.cached_segments(torch.tensor([0, 4, 10]), 10, x.device) is first
    # Changed in place: a new layout of the new offsets.
    ptr[1] = 6
    again = segment.cached_segments(ptr, 10, x.device)
    assert again is not first and list(again.offsets) == [0, 6, 10]
    # The result follows the new offsets.
    y = gnnc.segment_matmul(x, ptr, w)
    expected, _ = reference(x, ptr, w)
    assert torch.allclose(y.double().cpu(), expected, rtol=1e-4, atol=1e-4)


def test_bad_arguments(sdev):
    x = torch.randn(10, 8, device=sdev)
    w = torch.randn(2, 8, 4, device=sdev)
    with pytest.raises(gnnc.GnncError, match="must not decrease"):
        gnnc.segment_matmul(x, torch.tensor([0, 7, 5]), w)
    with pytest.raises(gnnc.GnncError, match="last segment offset"):
        gnnc.segment_matmul(x, torch.tensor([0, 4, 9]), w)
    with pytest.raises(gnnc.GnncError, match="offset 0 must be 0"):
        gnnc.segment_matmul(x, torch.tensor([1, 4, 10]), w)
    with pytest.raises(ValueError, match="T \\+ 1 = 3 offsets"):
        gnnc.segment_matmul(x, torch.tensor([0, 10]), w)
    with pytest.raises(ValueError, match="K = 8"):
        gnnc.segment_matmul(x, torch.tensor([0, 4, 10]), torch.randn(2, 6, 4, device=sdev))
    with pytest.raises(TypeError, match="one dtype"):
        gnnc.segment_matmul(x, torch.tensor([0, 4, 10]), w.half())
    with pytest.raises(TypeError, match="int64"):
        gnnc.segment_matmul(x, torch.tensor([0.0, 4.0, 10.0]), w)
