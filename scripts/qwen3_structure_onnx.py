#!/usr/bin/env python3
"""Writes a Qwen3-30B-A3B-shaped ONNX model of one decode step (one token), structure only:
every weight and KV cache is a graph input without data, so the file is small and no 30 B
parameters are needed. For `stepgen bench` (the import and the timing-only model at a real
model's size, docs/onnx.md#moe).

Shapes from Qwen3-30B-A3B's published configuration: 48 layers, hidden 2048, 32 query heads
and 4 KV heads of 128, 128 experts of width 768, top 8 renormalised (norm_topk_prob). Each
layer is written as PyTorch exports the plain blocks of examples/pytorch/export.py:
RMSNorm as Pow / ReduceMean / Add / Sqrt / Div / Mul; per query head its projection (the
weight's head columns), QK-norm, RoPE (q cos + (q R) sin with R the rotate-half matrix),
softmax attention over its KV head's cached keys and values (GQA: 8 query heads per KV
head) and its share of the output projection; the MoE as MoeFfn in export.py (router softmax,
TopK, renormalise, gates scattered into zeros, each expert's SwiGLU weighted by its gate
column, summed). Deterministic.

usage: /usr/bin/python3 scripts/qwen3_structure_onnx.py OUT.onnx [--layers N] [--kv L]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

D, HQ, HKV, DH, E, K, F = 2048, 32, 4, 128, 128, 8, 768


class Writer:
    def __init__(self):
        self.nodes, self.inputs, self.inits, self.n, self.declared = [], [], [], 0, set()

    def name(self, stem):
        self.n += 1
        return f"{stem}_{self.n}"

    def weight(self, name, shape):  # a graph input without data (declared once)
        if name not in self.declared:
            self.declared.add(name)
            self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    def const(self, stem, array):
        name = self.name(stem)
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def op(self, op, ins, outs=1, **attrs):
        names = [self.name(op.lower()) for _ in range(outs)]
        self.nodes.append(helper.make_node(op, ins, names, name=names[0] + "_node", **attrs))
        return names[0] if outs == 1 else names

    def rmsnorm(self, x, w, eps):
        ms = self.op("ReduceMean", [self.op("Pow", [x, self.two])], axes=[-1], keepdims=1)
        return self.op("Mul", [self.op("Div", [x, self.op("Sqrt", [self.op("Add", [ms, eps])])]), w])


def build(layers, kv):
    w = Writer()
    w.two = w.const("two", np.array(2.0, np.float32))
    eps = w.const("eps", np.array(1e-6, np.float32))
    scale = w.const("scale", np.array(DH ** -0.5, np.float32))
    kk = w.const("k", np.array([K], np.int64))
    axes = w.const("axes", np.array([-1], np.int64))
    zeros = w.const("zeros", np.zeros((1, E), np.float32))
    cos, sin = w.weight("rope_cos", [1, DH]), w.weight("rope_sin", [1, DH])
    rot = w.weight("rope_rotate_half", [DH, DH])
    x = w.weight("x", [1, D])
    cols = [(w.const(f"start{e}", np.array([e], np.int64)), w.const(f"end{e}", np.array([e + 1], np.int64))) for e in range(E)]
    for l in range(layers):
        p = f"l{l}_"
        h = w.rmsnorm(x, w.weight(p + "norm1", [D]), eps)
        attn = None
        for hq in range(HQ):
            kvh = hq // (HQ // HKV)
            q = w.op("MatMul", [h, w.weight(f"{p}wq{hq}", [D, DH])])
            q = w.rmsnorm(q, w.weight(f"{p}q_norm{hq}", [DH]), eps)
            q = w.op("Add", [w.op("Mul", [q, cos]), w.op("Mul", [w.op("MatMul", [q, rot]), sin])])
            kc = w.op("Transpose", [w.weight(f"{p}k_cache{kvh}", [kv, DH])], perm=[1, 0])
            s = w.op("Softmax", [w.op("MatMul", [w.op("Mul", [q, scale]), kc])], axis=-1)
            o = w.op("MatMul", [w.op("MatMul", [s, w.weight(f"{p}v_cache{kvh}", [kv, DH])]), w.weight(f"{p}wo{hq}", [DH, D])])
            attn = o if attn is None else w.op("Add", [attn, o])
        x = w.op("Add", [x, attn])
        h2 = w.rmsnorm(x, w.weight(p + "norm2", [D]), eps)
        probs = w.op("Softmax", [w.op("MatMul", [h2, w.weight(p + "router", [D, E])])], axis=-1)
        vals, idx = w.op("TopK", [probs, kk], outs=2, axis=-1, largest=1, sorted=1)
        gates = w.op("ScatterElements", [zeros, idx, w.op("Div", [vals, w.op("ReduceSum", [vals, axes], keepdims=1)])], axis=1)
        moe = None
        for e in range(E):
            g = w.op("MatMul", [h2, w.weight(f"{p}e{e}_gate", [D, F])])
            act = w.op("Mul", [w.op("Mul", [g, w.op("Sigmoid", [g])]), w.op("MatMul", [h2, w.weight(f"{p}e{e}_up", [D, F])])])
            out = w.op("MatMul", [act, w.weight(f"{p}e{e}_down", [F, D])])
            t = w.op("Mul", [w.op("Slice", [gates, cols[e][0], cols[e][1], axes]), out])
            moe = t if moe is None else w.op("Add", [moe, t])
        x = w.op("Add", [x, moe])
    y = helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, D])
    g = helper.make_graph(w.nodes, "qwen3_30b_a3b_structure", w.inputs, [y], w.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], producer_name="stepgen qwen3_structure_onnx.py")
    m.ir_version = 8
    return m


if __name__ == "__main__":
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("out")
    a.add_argument("--layers", type=int, default=48)
    a.add_argument("--kv", type=int, default=1024, help="cached tokens per KV head")
    args = a.parse_args()
    onnx.save(build(args.layers, args.kv), args.out)
