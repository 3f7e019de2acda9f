// sg_fifo (rtl_templates/sg_fifo.sv) at depths 1, 2, 3: order, registered full / empty,
// latency, and a random valid / ready soak against a C++ queue (with out_next: the head of
// the next cycle).
#include <catch2/catch.hpp>

#include <deque>
#include <memory>
#include <random>

#include "Vsg_fifo_d1.h"
#include "Vsg_fifo_d2.h"
#include "Vsg_fifo_d3.h"
#include "verilated.h"

namespace {

template <class V>
struct FifoSim {
  VerilatedContext vctx;
  std::unique_ptr<V> top;
  FifoSim() : top(std::make_unique<V>(&vctx)) {
    top->clk = 0;
    top->rst_n = 0;
    top->in_valid = 0;
    top->out_ready = 0;
    top->in_data = 0;
    for (int i = 0; i < 3; ++i) edge();
    top->rst_n = 1;
  }
  ~FifoSim() { top->final(); }
  void edge() {
    top->clk = 0;
    top->eval();
    top->clk = 1;
    top->eval();
  }
};

template <class V>
void runFifo(int depth) {
  FifoSim<V> s;
  auto& t = *s.top;
  // Fill without popping: accepts exactly `depth` beats; in_ready drops the cycle after
  // the last push (it is the registered !full); out_valid rises the cycle after the first.
  t.out_ready = 0;
  t.eval();
  CHECK(t.in_ready == 1);
  CHECK(t.out_valid == 0);
  int pushed = 0;
  for (int c = 0; c < depth + 3; ++c) {
    t.in_valid = 1;
    t.in_data = uint8_t(0x40 + c);
    t.clk = 0;
    t.eval();
    if (t.in_ready) ++pushed;
    if (c == 0) CHECK(t.out_valid == 0);
    if (c == 1) CHECK(t.out_valid == 1);
    t.clk = 1;
    t.eval();
  }
  CHECK(pushed == depth);
  t.in_valid = 0;
  t.clk = 0;
  t.eval();
  CHECK(t.in_ready == 0);
  // Drain: values in order, then empty.
  t.out_ready = 1;
  for (int i = 0; i < depth; ++i) {
    t.clk = 0;
    t.eval();
    REQUIRE(t.out_valid == 1);
    CHECK(int(t.out_data) == 0x40 + i);
    t.clk = 1;
    t.eval();
  }
  t.clk = 0;
  t.eval();
  CHECK(t.out_valid == 0);
  CHECK(t.in_ready == 1);

  // Random soak against a C++ queue.
  std::mt19937 rng(1234u + unsigned(depth));
  std::deque<int> model;
  int next = 0, expect = 0;
  for (int c = 0; c < 20000; ++c) {
    const bool iv = (rng() % 3) != 0;
    const bool orr = (rng() % 4) != 0;
    t.in_valid = iv;
    t.in_data = uint8_t(next & 0xFF);
    t.out_ready = orr;
    t.clk = 0;
    t.eval();
    REQUIRE(bool(t.in_ready) == (int(model.size()) < depth));
    REQUIRE(bool(t.out_valid) == !model.empty());
    const bool push = iv && t.in_ready;
    const bool pop = orr && t.out_valid;
    // The head after this edge: the queue's second entry if popped, else its first, or the
    // beat pushed now if that leaves the queue with only it.
    const size_t after = model.size() - (pop ? 1 : 0);
    if (after > 0) REQUIRE(int(t.out_next) == (model[pop ? 1 : 0] & 0xFF));
    else if (push) REQUIRE(int(t.out_next) == (next & 0xFF));
    if (pop) {
      REQUIRE(int(t.out_data) == (expect & 0xFF));
      ++expect;
      model.pop_front();
    }
    t.clk = 1;
    t.eval();
    if (push) {
      model.push_back(next);
      ++next;
    }
  }
  CHECK(expect > 5000);
}

}  // namespace

TEST_CASE("sg_fifo depth 1", "[rtl][fifo]") { runFifo<Vsg_fifo_d1>(1); }
TEST_CASE("sg_fifo depth 2", "[rtl][fifo]") { runFifo<Vsg_fifo_d2>(2); }
TEST_CASE("sg_fifo depth 3", "[rtl][fifo]") { runFifo<Vsg_fifo_d3>(3); }
