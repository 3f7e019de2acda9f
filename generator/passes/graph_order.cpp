// Dependency order of a StepGraph's operators (Kahn's algorithm) and the cycles that block it.
#include "passes/graph_order.hpp"

#include <functional>
#include <map>
#include <queue>
#include <unordered_map>

#include "ir/attrs.hpp"

namespace stepgen {

namespace {

/// The cycles among the ops not in `done`: from each unreported op, walk backwards through
/// not-done producers until an op repeats (a cycle) or a reported op is reached (downstream
/// of a reported cycle).
std::vector<OpCycle> findCycles(const StepGraph& g, const std::vector<int>& producerOf, const std::vector<bool>& done) {
  const size_t n = g.ops.size();
  std::vector<OpCycle> cycles;
  std::vector<bool> inReported(n, false);
  for (size_t start = 0; start < n; ++start) {
    if (done[start] || inReported[start]) continue;
    std::vector<int> path;
    std::vector<StreamId> via;  // via[k]: stream from path[k+1] (producer) into path[k]
    std::vector<int> pos(n, -1);
    int v = int(start);
    bool found = false;
    while (true) {
      if (inReported[size_t(v)]) break;
      if (pos[size_t(v)] >= 0) {
        found = true;
        break;
      }
      pos[size_t(v)] = int(path.size());
      path.push_back(v);
      int next = -1;
      StreamId through;
      for (StreamId s : g.ops[size_t(v)].inputs) {
        if (!g.hasStream(s)) continue;
        int p = producerOf[size_t(s.v)];
        if (p >= 0 && !done[size_t(p)] && !isFeedbackStream(g, s)) {
          next = p;
          through = s;
          break;
        }
      }
      if (next < 0) break;  // cannot happen for a not-done op; be safe
      via.push_back(through);
      v = next;
    }
    for (int x : path) inReported[size_t(x)] = true;
    if (!found) continue;
    // Cycle: bp = path[pos[v]..], each bp[j] consuming stream bvia[j] made by bp[j+1]
    // (the last one by bp[0]). Turn it forwards: producer -(stream)-> consumer.
    const size_t p0 = size_t(pos[size_t(v)]);
    std::vector<int> bp(path.begin() + long(p0), path.end());
    std::vector<StreamId> bvia(via.begin() + long(p0), via.end());
    const size_t L = bp.size();
    OpCycle c;
    for (size_t k = 0; k < L; ++k) {
      // ops[k] = bp[L-1-k] feeds ops[k+1] = bp[L-2-k] (ops[L-1] = bp[0] feeds bp[L-1]).
      c.ops.push_back(bp[L - 1 - k]);
      c.streams.push_back(bvia[(L - 2 - k + 2 * L) % L]);
    }
    cycles.push_back(std::move(c));
  }
  return cycles;
}

}  // namespace

bool isFeedbackStream(const StepGraph& g, StreamId s) {
  if (!g.hasStream(s) || !g.stream(s).producer.valid()) return false;
  const Op& p = g.op(g.stream(s).producer);
  if (p.kind != OpKind::Map || !p.attrs.count("initial") || !p.attrs.count("fn") || p.attrs.at("fn").scalar != "select")
    return false;
  try {  // `initial` may be an expression of the graph's symbols
    return attrInt(g, p, "initial") >= 1;
  } catch (const DiagError&) {  // not an integer: the shape check reports it (S-203)
    return false;
  }
}

std::vector<std::pair<int, int>> stateOrder(const StepGraph& g) {
  // Each op's state tensor (-1: none), looked up once: the section planner orders the graph
  // for every trial cut, and a layer has hundreds of loads and stores.
  std::unordered_map<std::string, int> state;
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (g.tensors[t].isState) state.emplace(g.tensors[t].name, int(t));
  std::vector<int> stateOf(g.ops.size(), -1);
  for (size_t i = 0; i < g.ops.size() && !state.empty(); ++i) {
    const Op& o = g.ops[i];
    if (!o.attrs.count("tensor")) continue;
    auto t = state.find(o.attrs.at("tensor").scalar);
    if (t != state.end()) stateOf[i] = t->second;
  }
  auto isStore = [](OpKind k) { return k == OpKind::LinearOffChipStore || k == OpKind::RandomOffChipStore; };
  auto isLoad = [](OpKind k) { return k == OpKind::LinearOffChipLoad || k == OpKind::RandomOffChipLoad; };
  std::map<int, std::vector<int>> loadsOf;
  for (size_t l = 0; l < g.ops.size(); ++l)
    if (stateOf[l] >= 0 && isLoad(g.ops[l].kind)) loadsOf[stateOf[l]].push_back(int(l));
  std::vector<std::pair<int, int>> pairs;
  for (size_t s = 0; s < g.ops.size(); ++s) {
    if (stateOf[s] < 0 || !isStore(g.ops[s].kind)) continue;
    auto it = loadsOf.find(stateOf[s]);
    if (it != loadsOf.end())
      for (int l : it->second) pairs.push_back({int(s), l});
  }
  return pairs;
}

OpOrder orderOps(const StepGraph& g) {
  const size_t n = g.ops.size();
  OpOrder r;
  r.producerOf.assign(g.streams.size(), -1);
  for (size_t i = 0; i < n; ++i)
    for (StreamId s : g.ops[i].outputs)
      if (g.hasStream(s) && r.producerOf[size_t(s.v)] < 0) r.producerOf[size_t(s.v)] = int(i);

  std::vector<int> indeg(n, 0);
  std::vector<std::vector<int>> succ(n);
  std::vector<bool> unproducedSeen(g.streams.size(), false);
  for (size_t i = 0; i < n; ++i) {
    for (StreamId s : g.ops[i].inputs) {
      if (!g.hasStream(s)) continue;
      int p = r.producerOf[size_t(s.v)];
      if (p >= 0 && isFeedbackStream(g, s)) continue;
      if (p < 0) {
        if (!unproducedSeen[size_t(s.v)]) r.unproduced.push_back(UnproducedRead{int(i), s});
        unproducedSeen[size_t(s.v)] = true;
        continue;
      }
      ++indeg[i];
      succ[size_t(p)].push_back(int(i));
    }
  }
  // A state tensor's loads after its stores, unless the store depends on the load.
  for (auto [st, ld] : stateOrder(g)) {
    std::vector<bool> seen(n, false);
    std::vector<int> todo = {ld};
    bool reaches = false;
    while (!todo.empty() && !reaches) {
      const int v = todo.back();
      todo.pop_back();
      reaches = v == st;
      for (int w : succ[size_t(v)])
        if (!seen[size_t(w)]) seen[size_t(w)] = true, todo.push_back(w);
    }
    if (reaches) {
      r.stateConflicts.push_back({st, ld});
      continue;
    }
    ++indeg[size_t(ld)];
    succ[size_t(st)].push_back(ld);
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < n; ++i)
    if (indeg[i] == 0) ready.push(int(i));
  std::vector<bool> done(n, false);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    done[size_t(i)] = true;
    r.order.push_back(i);
    for (int j : succ[size_t(i)])
      if (--indeg[size_t(j)] == 0) ready.push(j);
  }
  r.cycles = findCycles(g, r.producerOf, done);
  for (size_t s = 0; s < g.streams.size(); ++s)
    if (isFeedbackStream(g, StreamId{int(s)})) r.feedback.push_back(StreamId{int(s)});
  return r;
}

}  // namespace stepgen
