"""gnnc's ops inside CUDA graphs: a step captured with torch.cuda.graph
(gnnc's launches go to torch's current stream, so they are captured like
torch's own kernels) replays to the same results as the same step run
eagerly. GPU only (the `cuda` fixture of conftest.py): without one the
tests skip."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

import gnnc  # noqa: E402
from gnnc import Graph, ops  # noqa: E402
from test_torch_ops import ragged_edge_index  # noqa: E402


def _warm_and_capture(fn, warmup=2):
    """Runs fn() `warmup` times on a side stream (gnnc compiles, tunes and
    uploads on first use), then captures one call on that stream."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=stream):
        out = fn()
    return g, out


@pytest.mark.parametrize("op", ["spmm_sum", "spmm_mean_both", "spmm_self",
                                "sddmm", "gat_attention", "edge_softmax"])
def test_op_and_gradient_replay_like_eager(cuda, op):
    ei = ragged_edge_index(n=300, e=4000, seed=3).to(cuda)
    g = Graph.from_edge_index(ei, 300, device=cuda)
    gen = torch.Generator(device=cuda).manual_seed(5)
    x = torch.rand(300, 24, device=cuda, generator=gen, requires_grad=True)
    x2 = torch.rand(300, 24, device=cuda, generator=gen, requires_grad=True)
    scores = torch.rand(300, device=cuda, generator=gen)

    def forward():
        if op == "spmm_sum":
            return ops.spmm(g, x)
        if op == "spmm_mean_both":
            return ops.spmm(g, x, reduce="mean", norm="both")
        if op == "spmm_self":
            return ops.spmm(g, x, self_weight=0.5)
        if op == "sddmm":
            return ops.sddmm(g, x, x2)
        if op == "gat_attention":  # the fused kernel: no gradient recorded
            with torch.no_grad():
                return gnnc.gat_attention(g, x, scores, scores * 0.5)
        return gnnc.edge_softmax(g, ops.sddmm(g, x, x2).unsqueeze(1))

    def step():
        x.grad = x2.grad = None
        y = forward()
        if y.requires_grad:
            (y * y).sum().backward()
        return y

    graph, y_static = _warm_and_capture(step)
    # New inputs in place: the replay must use them, not the captured ones.
    with torch.no_grad():
        x.copy_(torch.rand(300, 24, device=cuda, generator=gen))
        x2.copy_(torch.rand(300, 24, device=cuda, generator=gen))
    graph.replay()
    torch.cuda.synchronize()
    got = y_static.detach().clone()
    got_grad = None if x.grad is None else x.grad.clone()
    want = step()
    torch.cuda.synchronize()
    torch.testing.assert_close(got, want.detach(), rtol=1e-5, atol=1e-5)
    if want.requires_grad:
        torch.testing.assert_close(got_grad, x.grad, rtol=1e-5, atol=1e-5)


def test_training_steps_replay_like_eager(cuda):
    """A GIN step (gnnc's GINConv, BatchNorm, SGD) captured once and
    replayed five times leaves the same weights as five eager steps from the
    same start. (Plain SGD moves a weight by its gradient, so equal gradients
    mean equal weights; Adam would turn the float noise of gradients that
    are zero in exact arithmetic, the bias before BatchNorm, into steps of
    the full learning rate.)"""
    ei = ragged_edge_index(n=400, e=3000, seed=7, symmetric=True).to(cuda)
    g = Graph.from_edge_index(ei, 400, device=cuda)
    gen = torch.Generator(device=cuda).manual_seed(1)
    x = torch.rand(400, 16, device=cuda, generator=gen)
    labels = torch.randint(0, 3, (400,), device=cuda, generator=gen)

    def model():
        torch.manual_seed(0)
        mlp = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.BatchNorm1d(32),
                                  torch.nn.ReLU(), torch.nn.Linear(32, 3))
        net = gnnc.nn.GINConv(mlp).to(cuda)
        return net, torch.optim.SGD(net.parameters(), lr=0.05)

    def step(net, opt):
        opt.zero_grad(set_to_none=False)
        loss = torch.nn.functional.cross_entropy(net(x, g), labels)
        loss.backward()
        opt.step()

    eager, eager_opt = model()
    for _ in range(2 + 5):  # the captured side's warm-up steps, then five
        step(eager, eager_opt)
    captured, captured_opt = model()
    graph, _ = _warm_and_capture(lambda: step(captured, captured_opt))
    for _ in range(5):
        graph.replay()
    torch.cuda.synchronize()
    for (name, a), b in zip(eager.state_dict().items(), captured.state_dict().values()):
        if a.is_floating_point():
            torch.testing.assert_close(b, a, rtol=1e-3, atol=1e-4, msg=name)
    assert np.isfinite(float(captured.nn[0].weight.sum()))


def test_first_call_inside_a_capture_works_or_says_why(cuda):
    """An op's first call on a graph (kernel compilation, uploads of the
    graph's derived arrays) inside a capture, without warming up: either the
    capture works and replays like the eager call, or the error says that
    the stream is being captured and what to do."""
    ei = ragged_edge_index(n=500, e=6000, seed=11).to(cuda)
    g = Graph.from_edge_index(ei, 500, device=cuda)
    x = torch.rand(500, 40, device=cuda)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph, stream=stream):
            y = ops.spmm(g, x, reduce="mean", norm="both")
    except Exception as e:  # gnnc's error, or torch's ending the capture
        chain, err = [], e
        while err is not None:
            chain.append(str(err))
            err = err.__context__
        assert any("captured into a CUDA graph" in m for m in chain), chain
        torch.cuda.synchronize()
        return
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(y, ops.spmm(g, x, reduce="mean", norm="both"),
                               rtol=1e-5, atol=1e-5)
