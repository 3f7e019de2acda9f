// The operator table and the unit catalogue: facts checked against hand-written lists and a
// hand-drawn 3x2 grid (not against the program's own output).
#include <catch2/catch.hpp>

#include "arch/unit_catalogue.hpp"
#include "ir/op_table.hpp"

using namespace stepgen;

TEST_CASE("operator table: rows in OpKind order, names round-trip", "[tables]") {
  const auto& t = opTable();
  REQUIRE(t.size() == size_t(OpKind::AddrGen) + 1);
  for (size_t i = 0; i < t.size(); ++i) {
    INFO(t[i].name);
    CHECK(int(t[i].kind) == int(i));
    REQUIRE(opKindFromName(t[i].name).has_value());
    CHECK(*opKindFromName(t[i].name) == t[i].kind);
  }
  CHECK_FALSE(opKindFromName("Bufferise").has_value());
  CHECK(std::string(opKindName(OpKind::EagerMerge)) == "EagerMerge");
}

TEST_CASE("operator table: what reaches hardware how", "[tables]") {
  // docs/step_semantics.md "On a fabric": the interconnect realises these five.
  for (OpKind k : {OpKind::Zip, OpKind::Broadcast, OpKind::Promote, OpKind::Flatten, OpKind::Streamify})
    CHECK(opRow(k).hardware == OpHardware::Absorbed);
  CHECK(opRow(OpKind::LinearOffChipLoad).unit == UnitKind::AddressGen);
  CHECK(opRow(OpKind::SelectGen).unit == UnitKind::AddressGen);
  CHECK(opRow(OpKind::Bufferize).unit == UnitKind::Memory);
  CHECK(opRow(OpKind::Parallelize).unit == UnitKind::Compute);
  CHECK(opRow(OpKind::EagerMerge).hardware == OpHardware::Cluster);
  CHECK(opRow(OpKind::RandomOffChipStore).hardware == OpHardware::Cluster);  // a random store with `index`
  CHECK(opRow(OpKind::Partition).arity.inMin == 2);
  CHECK(opRow(OpKind::Partition).arity.outMax == -1);
}

TEST_CASE("compute-unit functions: (op, fn) -> CuFunc and the arch function name", "[tables]") {
  auto op = [](OpKind k, const std::string& fn) {
    Op o;
    o.kind = k;
    if (!fn.empty()) o.attrs["fn"].scalar = fn;
    return o;
  };
  const Op mt = op(OpKind::Map, "matmul_t");
  REQUIRE(cuFunctionOf(mt));
  CHECK(cuFunctionOf(mt)->func == CuFunc::Matmul);
  CHECK(cuFunctionOf(mt)->transposedB);
  CHECK(cuFunctionName(op(OpKind::Map, "scale_rows")) == "rowscale");
  CHECK(cuFunctionOf(op(OpKind::Accum, "retile"))->func == CuFunc::Retile);
  CHECK(cuFunctionOf(op(OpKind::Expand, ""))->func == CuFunc::Expand);
  CHECK(cuFunctionOf(op(OpKind::Map, "exp"))->func == CuFunc::Exp);
  CHECK(cuFunctionOf(op(OpKind::Map, "sub"))->func == CuFunc::Sub);
  CHECK(cuFunctionOf(op(OpKind::Map, "recip"))->func == CuFunc::Recip);
  CHECK(cuFunctionOf(op(OpKind::Map, "softmax")) == nullptr);
  CHECK(cuFunctionName(op(OpKind::Scan, "max")) == "scan_max");  // named so M-304 can say it is missing
  CHECK(cuFunctionName(op(OpKind::Bufferize, "")).empty());
}

namespace {

// Row-major 3x2 grid:   y0: AG(0,0) CU(1,0) MU(2,0)
//                       y1: CU(0,1) --   AG(2,1)
ArchModel grid(int reach) {
  ArchModel a;
  a.cols = 3, a.rows = 2;
  a.link.reach = reach;
  a.link.widthBits = 512;
  a.mu.bytesPerCycle = 24;
  using K = UnitKind;
  const K kinds[6] = {K::AddressGen, K::Compute, K::Memory, K::Compute, K::Empty, K::AddressGen};
  for (int i = 0; i < 6; ++i) a.units.push_back({kinds[i], i % 3, i / 3, {}});
  return a;
}

std::vector<int> ids(const std::vector<UnitId>& v) {
  std::vector<int> r;
  for (UnitId u : v) r.push_back(u.v);
  return r;
}

}  // namespace

TEST_CASE("unit catalogue: names, kinds, reach and source selects on a 3x2 grid", "[tables]") {
  const ArchModel a = grid(1);
  const UnitCatalogue c(a);
  CHECK(ids(c.units()) == std::vector<int>{0, 1, 2, 3, 5});
  CHECK(c.instanceName({3}) == "u_cu_x0_y1");
  CHECK(c.portName({2}, 1) == "u_mu_x2_y0.in1");
  CHECK(c.kindIndex({5}) == 1);  // the second address generator
  CHECK(c.kindIndex({3}) == 1);
  CHECK(c.distance({0}, {5}) == 3);
  // reach 1: the CU at (1,0) hears the AG at (0,0) and the MU at (2,0); (0,1) is 2 away.
  CHECK(ids(c.candidates({1})) == std::vector<int>{0, 2});
  CHECK(ids(c.candidates({5})) == std::vector<int>{2});
  CHECK(c.sourceSelect({1}, {2}) == 2);
  CHECK(c.sourceSelect({1}, {3}) == 0);
  CHECK(c.sourceSelectBits() == 2);  // at most 2 candidates + "unconnected"
  CHECK(c.fabricPortNames().size() == 10);
  CHECK(muCyclesPerBeat(a) == 3);  // 64-byte beats at 24 bytes/cycle: ceil(64/24)

  const UnitCatalogue x(grid(9));
  CHECK(ids(x.candidates({1})) == std::vector<int>{0, 2, 3, 5});
  CHECK(x.sourceSelectBits() == 3);  // 4 candidates + "unconnected" = 5 values
}
