#!/usr/bin/env python3
"""Writes the PyTorch examples of docs/onnx.md: for each block, <block>/model.onnx, its inputs
(<block>/data/<input>.npy) and PyTorch's own outputs (<block>/data/<output>.npy), all as 2-D
float32 arrays [product of the leading dims, last dim].

Run with Debian's python3-torch and python3-onnx (scripts/bootstrap.sh installs them):
    /usr/bin/python3 examples/pytorch/export.py
Deterministic: seeded weights and inputs; the files are committed, so the tests need no torch.
"""
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


class RMSNorm(torch.nn.Module):
    """Llama's RMSNorm: x * rsqrt(mean(x^2) + eps) * w, written in plain operators."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x):
        return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class DenseBlock(torch.nn.Module):
    """One decode step of a Llama-style dense decoder block at small dims: RMSNorm, a single
    attention head over a KV cache given as inputs (no RoPE, no KV append), the output
    projection and residual, RMSNorm, the SwiGLU MLP (SiLU written as x * sigmoid(x)) and
    residual. Weights are stored [in, out] so the graph multiplies x @ W as PyTorch does."""

    def __init__(self, dim, ffn):
        super().__init__()
        s = dim ** -0.5
        self.norm1, self.norm2 = RMSNorm(dim), RMSNorm(dim)
        self.wq, self.wo = (torch.nn.Parameter(s * torch.randn(dim, dim)) for _ in range(2))
        self.w_gate, self.w_up = (torch.nn.Parameter(s * torch.randn(dim, ffn)) for _ in range(2))
        self.w_down = torch.nn.Parameter(ffn ** -0.5 * torch.randn(ffn, dim))
        self.scale = dim ** -0.5

    def forward(self, x, k_cache, v_cache):
        h = self.norm1(x)
        q = h @ self.wq
        p = torch.softmax((q * self.scale) @ k_cache.transpose(0, 1), dim=-1)
        x = x + (p @ v_cache) @ self.wo
        h = self.norm2(x)
        g = h @ self.w_gate
        return x + ((g * torch.sigmoid(g)) * (h @ self.w_up)) @ self.w_down


def rope(x, cos, sin):
    """RoPE's rotate-half form (Llama): x * cos + cat(-x2, x1) * sin over the head dim."""
    h = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., h:], x[..., :h]), dim=-1) * sin


class LlamaBlock(torch.nn.Module):
    """A Llama-style decoder block over a sequence of `tokens` (prefill, causal): RMSNorm,
    q / k / v projections split into heads, RoPE on q and k, causal softmax attention per
    head, output projection and residual, RMSNorm, SwiGLU MLP, residual. Weights [in, out]."""

    def __init__(self, dim, heads, ffn, tokens, theta=10000.0):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        s = dim ** -0.5
        self.norm1, self.norm2 = RMSNorm(dim), RMSNorm(dim)
        self.wq, self.wk, self.wv, self.wo = (torch.nn.Parameter(s * torch.randn(dim, dim)) for _ in range(4))
        self.w_gate, self.w_up = (torch.nn.Parameter(s * torch.randn(dim, ffn)) for _ in range(2))
        self.w_down = torch.nn.Parameter(ffn ** -0.5 * torch.randn(ffn, dim))
        inv = theta ** (-torch.arange(0, self.hd, 2).float() / self.hd)
        ang = torch.outer(torch.arange(tokens).float(), inv)
        ang = torch.cat((ang, ang), dim=-1)  # [tokens, hd]
        self.register_buffer("cos", ang.cos()[:, None, :])
        self.register_buffer("sin", ang.sin()[:, None, :])
        self.register_buffer("mask", torch.triu(torch.full((tokens, tokens), float("-inf")), 1))

    def forward(self, x):
        t = x.shape[0]
        h = self.norm1(x)
        q = rope((h @ self.wq).reshape(t, self.heads, self.hd), self.cos, self.sin).transpose(0, 1)
        k = rope((h @ self.wk).reshape(t, self.heads, self.hd), self.cos, self.sin).transpose(0, 1)
        v = (h @ self.wv).reshape(t, self.heads, self.hd).transpose(0, 1)
        p = torch.softmax((q * self.hd ** -0.5) @ k.transpose(1, 2) + self.mask, dim=-1)
        x = x + (p @ v).transpose(0, 1).reshape(t, -1) @ self.wo
        h = self.norm2(x)
        g = h @ self.w_gate
        return x + ((g * torch.sigmoid(g)) * (h @ self.w_up)) @ self.w_down


class MlpBlock(torch.nn.Module):
    """The MLP half of a Llama-style block over `tokens` rows: RMSNorm, the SwiGLU MLP (SiLU as
    x * sigmoid(x)) and residual. Every operator works row by row, so the importer can stream
    it in row tiles (docs/onnx.md#tiling). Weights [in, out]."""

    def __init__(self, dim, ffn):
        super().__init__()
        s = dim ** -0.5
        self.norm = RMSNorm(dim)
        self.w_gate, self.w_up = (torch.nn.Parameter(s * torch.randn(dim, ffn)) for _ in range(2))
        self.w_down = torch.nn.Parameter(ffn ** -0.5 * torch.randn(ffn, dim))

    def forward(self, x):
        h = self.norm(x)
        g = h @ self.w_gate
        return x + ((g * torch.sigmoid(g)) * (h @ self.w_up)) @ self.w_down


class MoeFfn(torch.nn.Module):
    """Qwen3's sparse MoE FFN: router softmax, top-k, the chosen probabilities renormalised
    (norm_topk_prob), SwiGLU experts. Written with static shapes, as an export needs: each
    expert's output is weighted by its column of a gate matrix that is zero for the experts a
    token did not choose. stepgen's importer recognises the block (docs/onnx.md#moe) and runs
    each expert on its chosen tokens only."""

    def __init__(self, dim, ffn, experts, k):
        super().__init__()
        self.k = k
        s = dim ** -0.5
        self.w_router = torch.nn.Parameter(s * torch.randn(dim, experts))
        self.w_gate, self.w_up = (torch.nn.Parameter(s * torch.randn(experts, dim, ffn)) for _ in range(2))
        self.w_down = torch.nn.Parameter(ffn ** -0.5 * torch.randn(experts, ffn, dim))

    def forward(self, h):
        probs = torch.softmax(h @ self.w_router, dim=-1)
        vals, idx = torch.topk(probs, self.k, dim=-1)
        gates = torch.zeros_like(probs).scatter(1, idx, vals / vals.sum(-1, keepdim=True))
        y = None
        for e in range(self.w_router.shape[1]):
            g = h @ self.w_gate[e]
            t = gates[:, e:e + 1] * (((g * torch.sigmoid(g)) * (h @ self.w_up[e])) @ self.w_down[e])
            y = t if y is None else y + t
        return y


class Qwen3MoeBlock(torch.nn.Module):
    """One decode step of a Qwen3-MoE-style block at small dims: RMSNorm, one attention head
    over a KV cache given as inputs (keys already normalised, as Qwen3 caches them) with
    Qwen3's QK-norm on the query (RMSNorm over the head dim), the output projection and
    residual, RMSNorm, the sparse MoE FFN (MoeFfn) and residual. Weights [in, out]."""

    def __init__(self, dim, ffn, experts, k):
        super().__init__()
        s = dim ** -0.5
        self.norm1, self.norm2, self.q_norm = RMSNorm(dim), RMSNorm(dim), RMSNorm(dim)
        self.wq, self.wo = (torch.nn.Parameter(s * torch.randn(dim, dim)) for _ in range(2))
        self.moe = MoeFfn(dim, ffn, experts, k)
        self.scale = dim ** -0.5

    def forward(self, x, k_cache, v_cache):
        q = self.q_norm(self.norm1(x) @ self.wq)
        p = torch.softmax((q * self.scale) @ k_cache.transpose(0, 1), dim=-1)
        x = x + (p @ v_cache) @ self.wo
        return x + self.moe(self.norm2(x))


class EmbedBlock(torch.nn.Module):
    """A token embedding and the first projection after it: y = embed(ids) @ W. The lookup
    exports as ONNX Gather, which stepgen lowers to an index load (docs/onnx.md#gather)."""

    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.w = torch.nn.Parameter(dim ** -0.5 * torch.randn(dim, dim))

    def forward(self, ids):
        return self.embed(ids) @ self.w


class WideMlpBlock(torch.nn.Module):
    """A two-layer MLP with SiLU and a residual whose weights are each larger than a compute
    unit's local memory: y = x + silu(x W1^T + b1) W2. The first projection is nn.Linear
    (ONNX Gemm, transB), the second a MatMul by a [F, D] weight; stepgen makes each a linear
    stage tiled over K and the output columns (docs/onnx.md#linear)."""

    def __init__(self, dim, ffn):
        super().__init__()
        self.up = torch.nn.Linear(dim, ffn)
        self.down = torch.nn.Parameter(ffn ** -0.5 * torch.randn(ffn, dim))

    def forward(self, x):
        h = self.up(x)
        return x + (h * torch.sigmoid(h)) @ self.down


def write(block, name, inputs, dims):
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "data"), exist_ok=True)
    names = list(inputs)
    with torch.no_grad():
        y = block(*inputs.values())
        torch.onnx.export(block, tuple(inputs.values()), os.path.join(d, "model.onnx"), input_names=names,
                          output_names=["y"], opset_version=14, do_constant_folding=True)
    for n, t in list(inputs.items()) + [("y", y)]:
        a = t.detach().numpy().astype(np.float32)
        np.save(os.path.join(d, "data", n + ".npy"), a.reshape(-1, a.shape[-1]))
    with open(os.path.join(d, "dims.txt"), "w") as f:  # read by scripts/pytorch_blocks.sh
        f.write(f"{dims} {next(iter(inputs.values())).shape[0]}\n")


if __name__ == "__main__":
    torch.manual_seed(0)
    dim, ffn, tokens, kv = 16, 32, 2, 16  # every tile row a whole 64-byte DRAM piece (M-305)
    write(DenseBlock(dim, ffn), "dense_block",
          {"x": torch.randn(tokens, dim), "k_cache": torch.randn(kv, dim), "v_cache": torch.randn(kv, dim)},
          f"D{dim}-F{ffn}-KV{kv}")
    dim, heads, ffn, tokens = 64, 2, 64, 16  # head dim 32: RoPE's halves are whole 64-byte rows
    write(LlamaBlock(dim, heads, ffn, tokens), "llama_block", {"x": torch.randn(tokens, dim)},
          f"D{dim}-H{heads}-F{ffn}-T{tokens}")
    dim, ffn, experts, k, tokens, kv = 16, 32, 4, 2, 8, 16
    write(Qwen3MoeBlock(dim, ffn, experts, k), "qwen3_moe_block",
          {"x": torch.randn(tokens, dim), "k_cache": torch.randn(kv, dim), "v_cache": torch.randn(kv, dim)},
          f"D{dim}-F{ffn}-E{experts}-K{k}-KV{kv}")
    # 128 tokens: a whole-tile matmul takes 28,672 words, more than arch/onnx_small.yaml's
    # compute unit holds; `import onnx --arch` cuts the rows in tiles of 64.
    dim, ffn, tokens = 32, 64, 128
    write(MlpBlock(dim, ffn), "mlp_block", {"x": torch.randn(tokens, dim)}, f"D{dim}-F{ffn}-T{tokens}")
    # Token ids are int64 in the model; data/ids.npy holds them as float32 whole numbers.
    vocab, dim, tokens = 256, 64, 16
    write(EmbedBlock(vocab, dim), "embed_block", {"ids": torch.randint(0, vocab, (tokens,))}, f"V{vocab}-D{dim}-T{tokens}")
    # Each weight is 128 KB, twice a compute unit's 64 KB of arch/onnx_moe.yaml: `import onnx
    # --arch` tiles both products (linear stages).
    dim, ffn, tokens = 128, 256, 16
    write(WideMlpBlock(dim, ffn), "wide_mlp_block", {"x": torch.randn(tokens, dim)}, f"D{dim}-F{ffn}-T{tokens}")
