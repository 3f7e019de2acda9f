#include "ir/op_table.hpp"


#include "ir/attrs.hpp"

namespace stepgen {

namespace {

using H = OpHardware;
using U = UnitKind;

// In OpKind order (checked in opRow). Keys: docs/graph_format.md; arity comments give the
// port order the shape rules and units assume.
const std::vector<OpRow> kTable = {
    {OpKind::LinearOffChipLoad, "LinearOffChipLoad", {"tensor", "tile", "iter", "strides", "origin"}, {0, 0, 1, 1}, H::Unit, U::AddressGen},
    {OpKind::LinearOffChipStore, "LinearOffChipStore", {"tensor", "iter", "strides", "tile", "origin"}, {1, 1, 0, 0}, H::Unit, U::AddressGen},
    // The expert weight load of a MoE layer (AddrGen -> RandomOffChipLoad) and a load of runs of
    // tiles (`count`: a meta row per address element) are clusters (map/clusters.hpp).
    {OpKind::RandomOffChipLoad, "RandomOffChipLoad", {"tensor", "tile", "index", "count", "step"}, {1, 1, 1, 1}, H::Cluster, U::Empty},
    // A random store is a cluster of its own: the AG takes data on in0, addresses on in1.
    {OpKind::RandomOffChipStore, "RandomOffChipStore", {"tensor", "index"}, {2, 2, 0, 1}, H::Cluster, U::Empty},  // [addr, data] -> acks
    {OpKind::Bufferize, "Bufferize", {"b"}, {1, 1, 1, 1}, H::Unit, U::Memory},
    {OpKind::Streamify, "Streamify", {"repeat"}, {1, 1, 1, 1}, H::Absorbed, U::Empty},  // run by its Bufferize's MU
    {OpKind::RepeatStatic, "RepeatStatic", {"n"}, {1, 1, 1, 1}, H::Unit, U::Memory},
    {OpKind::Broadcast, "Broadcast", {}, {1, 1, 1, -1}, H::Absorbed, U::Empty},  // link fan-out
    {OpKind::Map, "Map", {"fn", "value", "n", "initial", "k"}, {1, 1, 1, 1}, H::Unit, U::Compute},  // value, n, initial: fn select; k: topk
    {OpKind::Accum, "Accum", {"fn", "b"}, {1, 1, 1, 1}, H::Unit, U::Compute},
    {OpKind::Scan, "Scan", {"fn", "b"}, {1, 1, 1, 1}, H::Unit, U::Compute},
    {OpKind::FlatMap, "FlatMap", {"fn", "b"}, {1, 2, 1, 1}, H::Cluster, U::Empty},  // data, optional is-padding
    {OpKind::Promote, "Promote", {"b"}, {1, 1, 1, 1}, H::Absorbed, U::Empty},     // stop-level map
    {OpKind::Flatten, "Flatten", {"lo", "hi"}, {1, 1, 1, 1}, H::Absorbed, U::Empty},
    {OpKind::Reshape, "Reshape", {"chunk", "b", "pad"}, {1, 1, 1, 2}, H::Cluster, U::Empty},  // data, optional is-padding
    {OpKind::Expand, "Expand", {"b"}, {2, 2, 1, 1}, H::Unit, U::Compute},  // [data, ref]
    {OpKind::Zip, "Zip", {}, {2, 2, 1, 1}, H::Absorbed, U::Empty},         // two input ports of the consumer
    {OpKind::Partition, "Partition", {"n", "b"}, {2, 2, 1, -1}, H::Cluster, U::Empty},      // [data, selector]
    // Hosts of clusters; where each kind runs: map/clusters.hpp clusterUnit.
    {OpKind::Reassemble, "Reassemble", {"n", "b"}, {2, -1, 1, 1}, H::Cluster, U::Empty},   // [i_0..i_{n-1}, selector]
    {OpKind::EagerMerge, "EagerMerge", {"b"}, {1, -1, 1, 2}, H::Cluster, U::Empty},        // -> data [, selector]
    {OpKind::Parallelize, "Parallelize", {}, {1, 1, 1, -1}, H::Unit, U::Compute},           // one CU per output
    {OpKind::SelectGen, "SelectGen", {"trace", "n", "k", "iter", "tensor", "first", "of", "skip"}, {0, 0, 1, 1}, H::Unit, U::AddressGen},
    {OpKind::AddrGen, "AddrGen", {"tiles"}, {1, 1, 1, 1}, H::Cluster, U::Empty},
};

const std::vector<CuFunctionRow> kCuFunctions = {
    {OpKind::Map, "matmul", CuFunc::Matmul, "matmul", false},
    {OpKind::Map, "matmul_t", CuFunc::Matmul, "matmul_t", true},
    {OpKind::Map, "silu", CuFunc::Silu, "silu", false},
    {OpKind::Map, "mul", CuFunc::Mul, "mul", false},
    {OpKind::Map, "add", CuFunc::Add, "add", false},
    {OpKind::Map, "sub", CuFunc::Sub, "sub", false},
    {OpKind::Map, "exp", CuFunc::Exp, "exp", false},
    {OpKind::Map, "recip", CuFunc::Recip, "recip", false},
    {OpKind::Map, "rsqrt", CuFunc::Rsqrt, "rsqrt", false},
    {OpKind::Map, "topk", CuFunc::TopK, "topk", false},
    {OpKind::Map, "topk_logits", CuFunc::TopKLogits, "topk", false},
    {OpKind::Map, "rowmax", CuFunc::RowMax, "rowmax", false},
    {OpKind::Map, "rowsum", CuFunc::RowSum, "rowsum", false},
    {OpKind::Map, "scale_rows", CuFunc::RowScale, "rowscale", false},
    {OpKind::Map, "select", CuFunc::Select, "select", false},
    {OpKind::Accum, "add", CuFunc::Accum, "accum", false},
    {OpKind::Accum, "retile", CuFunc::Retile, "retile", false},
    {OpKind::Accum, "max", CuFunc::AccumMax, "accum_max", false},
    {OpKind::Accum, "rescale_add", CuFunc::AccumRescale, "accum_rescale", false},
    {OpKind::Scan, "add", CuFunc::Scan, "scan", false},
    {OpKind::Scan, "max", CuFunc::ScanMax, "scan_max", false},
    {OpKind::Scan, "max_exclusive", CuFunc::ScanMaxExcl, "scan_max_exclusive", false},
    {OpKind::Expand, "", CuFunc::Expand, "expand", false},
    {OpKind::Parallelize, "", CuFunc::Parallelize, "parallelize", false},
    {OpKind::Partition, "", CuFunc::Partition, "partition", false},
    {OpKind::EagerMerge, "", CuFunc::Merge, "merge", false},  // on a CU only (map/clusters.hpp Merge)
};

std::string fnOf(const Op& op) { return op.attrs.count("fn") ? attrString(op, "fn") : ""; }

}  // namespace

const std::vector<OpRow>& opTable() { return kTable; }

// Rows are in OpKind order (tests/unit/test_tables.cpp checks it).
const OpRow& opRow(OpKind k) { return kTable.at(size_t(k)); }

const char* opKindName(OpKind k) {
  const size_t i = size_t(k);
  return i < kTable.size() ? kTable[i].name : "?";
}

std::optional<OpKind> opKindFromName(const std::string& s) {
  for (const OpRow& r : kTable)
    if (s == r.name) return r.kind;
  return std::nullopt;
}

const CuFunctionRow* cuFunctionOf(const Op& op) {
  const std::string fn = fnOf(op);
  for (const CuFunctionRow& r : kCuFunctions)
    if (r.op == op.kind && fn == r.fn) return &r;
  return nullptr;
}

std::string cuFunctionName(const Op& op) {
  if (const CuFunctionRow* r = cuFunctionOf(op)) return r->archName;
  if (opRow(op.kind).unit != UnitKind::Compute) return "";
  if (op.kind == OpKind::Scan) return "scan_" + fnOf(op);
  return fnOf(op);
}

}  // namespace stepgen
