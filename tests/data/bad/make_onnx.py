#!/usr/bin/env python3
# Writes the ONNX inputs of the golden diagnostics that ONNX's own test data does not give:
# onnx_opset18.onnx, an Add at opset 18 (above the supported 1..17), and onnx_domain.onnx, an
# Add of a custom domain. Run with Debian's
# python3-onnx: /usr/bin/python3 tests/data/bad/make_onnx.py
import os

import onnx
from onnx import TensorProto, helper

here = os.path.dirname(os.path.abspath(__file__))
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])
g = helper.make_graph([helper.make_node("Add", ["x", "y"], ["z"], name="add0")], "opset18", [x, y], [z])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], producer_name="stepgen make_onnx.py")
m.ir_version = 8
onnx.save(m, os.path.join(here, "onnx_opset18.onnx"))
g = helper.make_graph([helper.make_node("Add", ["x", "y"], ["z"], name="add0", domain="com.example")], "domain",
                      [x, y], [z])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14), helper.make_opsetid("com.example", 1)],
                      producer_name="stepgen make_onnx.py")
m.ir_version = 8
onnx.save(m, os.path.join(here, "onnx_domain.onnx"))
