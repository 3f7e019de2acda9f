// Functional semantics of the dynamic STeP operators (docs/step_semantics.md#operators); see
// routing_ops.hpp for the shapes and stop rules of every function.
#include "model/routing_ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "common/fp.hpp"

namespace stepgen {

namespace {

using Kind = Token::Kind;

[[noreturn]] void fail(const std::string& who, const std::string& what) {
  throw std::invalid_argument(who + ": " + what);
}

// The tokens of `s` before its final Done; throws unless exactly one Done ends it.
size_t bodyLength(const TokenStream& s, const std::string& who) {
  if (s.empty() || s.back().kind != Kind::Done) fail(who, "stream does not end with DONE");
  for (size_t i = 0; i + 1 < s.size(); ++i)
    if (s[i].kind == Kind::Done) fail(who, fmt::format("DONE at token {} before the end", i));
  return s.size() - 1;
}

// One inner-b chunk, as read from the stream (tokens unchanged).
struct Chunk {
  TokenStream toks;    // the chunk's tokens, closing token included
  int close = 0;       // stop level of the closing token
  bool empty = false;  // b >= 1: a Stop token (stop >= b) with no element before it
  bool outer = false;  // b = 0: a Stop token (outer structure, not a chunk)
};

std::vector<Chunk> splitChunks(const TokenStream& s, int b, const std::string& who) {
  if (b < 0) fail(who, "negative rank b");
  size_t n = bodyLength(s, who);
  std::vector<Chunk> out;
  Chunk cur;
  for (size_t i = 0; i < n; ++i) {
    const Token& t = s[i];
    if (b == 0) {
      Chunk c;
      c.toks = {t};
      c.close = t.stop;
      c.outer = t.kind == Kind::Stop;
      out.push_back(std::move(c));
      continue;
    }
    bool closes = t.stop >= b;
    if (closes && t.kind == Kind::Stop && cur.toks.empty()) cur.empty = true;
    cur.toks.push_back(t);
    if (closes) {
      cur.close = t.stop;
      out.push_back(std::move(cur));
      cur = Chunk();
    }
  }
  if (!cur.toks.empty())
    fail(who, fmt::format("{} token(s) before DONE are not closed by a stop >= {} (rank above the stream's rank)",
                          cur.toks.size(), b));
  return out;
}

// Writes a chunk to a rank-b output: inner stops kept, last element at stop b; an empty
// chunk as STOP(b). Returns the index of the chunk's last token in `out`.
size_t writeChunk(TokenStream& out, const Chunk& c, int b) {
  if (c.empty) {
    out.push_back(Token::stopOnly(b));
    return out.size() - 1;
  }
  size_t n = c.toks.size();
  if (b > 0 && c.toks.back().kind == Kind::Stop) --n;  // a stop-only beat closing a non-empty chunk
  for (size_t i = 0; i < n; ++i) out.push_back(c.toks[i]);
  out.back().stop = b;
  return out.size() - 1;
}

void checkSelector(const Token& t, int n, const std::string& who) {
  for (size_t i = 0; i < t.sel.size(); ++i) {
    if (t.sel[i] < 0 || t.sel[i] >= n) fail(who, fmt::format("selector names output {} of {}", t.sel[i], n));
    if (i > 0 && t.sel[i] <= t.sel[i - 1]) fail(who, "selector elements are not ascending and distinct");
  }
}

Token zeroTile(int64_t rows, int64_t cols, int stop) {
  return Token::tile(rows, cols, std::vector<uint32_t>(size_t(rows * cols), 0u), stop);
}

}  // namespace

Token selectorToken(std::vector<int> sel, int stop) {
  uint32_t mask = 0;
  for (int i : sel)
    if (i >= 0 && i < 32) mask |= 1u << i;
  Token t = flagToken(mask, stop);
  t.sel = std::move(sel);
  return t;
}

Token flagToken(uint32_t word, int stop) { return Token::tile(1, 1, {word}, stop); }

std::vector<TokenStream> partition(const TokenStream& data, const TokenStream& sel, int n, int b, size_t* starved) {
  const std::string who = "Partition";
  if (n < 1) fail(who, "needs at least one output");
  std::vector<Chunk> chunks = splitChunks(data, b, who);
  chunks.erase(std::remove_if(chunks.begin(), chunks.end(), [](const Chunk& c) { return c.outer; }), chunks.end());
  std::vector<TokenStream> out(static_cast<size_t>(n));
  size_t k = 0;
  for (size_t i = 0, e = bodyLength(sel, who + " selector"); i < e; ++i) {
    const Token& s = sel[i];
    if (s.kind != Kind::Data) continue;
    checkSelector(s, n, who);
    if (k >= chunks.size()) {
      if (starved) break;  // a fed-back selector's spare elements: drained, not routed
      fail(who, fmt::format("more selector elements than the {} chunk(s) of data", chunks.size()));
    }
    for (int o : s.sel) writeChunk(out[size_t(o)], chunks[k], b);
    ++k;
  }
  if (starved) *starved = chunks.size() - k;
  else if (k != chunks.size()) fail(who, fmt::format("{} selector element(s) for {} chunk(s) of data", k, chunks.size()));
  for (TokenStream& o : out) o.push_back(Token::done());
  return out;
}

TokenStream selectSignals(const TokenStream& in, int value, int n, int64_t initial) {
  const std::string who = "Map select";
  if (value < 0 || value >= n) fail(who, fmt::format("value {} is not an output of {}", value, n));
  if (initial < 0) fail(who, "negative number of initial tokens");
  TokenStream out;
  for (int64_t i = 0; i < initial; ++i) out.push_back(selectorToken({value}, 0));
  for (size_t i = 0, e = bodyLength(in, who); i < e; ++i)
    if (in[i].kind == Kind::Data) out.push_back(selectorToken({value}, 0));
  out.push_back(Token::done());
  return out;
}

// The inner-b chunks of every input (outer structure dropped), for Reassemble/EagerMerge.
static std::vector<std::vector<Chunk>> innerChunks(const std::vector<TokenStream>& in, int b, const std::string& who) {
  std::vector<std::vector<Chunk>> chunks;
  for (size_t i = 0; i < in.size(); ++i) {
    chunks.push_back(splitChunks(in[i], b, fmt::format("{} input {}", who, i)));
    auto& c = chunks.back();
    c.erase(std::remove_if(c.begin(), c.end(), [](const Chunk& x) { return x.outer; }), c.end());
  }
  return chunks;
}

TokenStream reassemble(const std::vector<TokenStream>& in, const TokenStream& sel, int b) {
  const std::string who = "Reassemble";
  const int n = int(in.size());
  std::vector<std::vector<Chunk>> chunks = innerChunks(in, b, who);
  std::vector<size_t> next(size_t(n), 0);
  TokenStream out;
  for (size_t i = 0, e = bodyLength(sel, who + " selector"); i < e; ++i) {
    const Token& s = sel[i];
    if (s.kind != Kind::Stop) checkSelector(s, n, who);
    if (s.kind == Kind::Stop || s.sel.empty()) {  // an empty outer group, or nothing selected
      out.push_back(Token::stopOnly(b + 1 + s.stop));
      continue;
    }
    size_t last = 0;
    for (int o : s.sel) {
      auto& c = chunks[size_t(o)];
      if (next[size_t(o)] >= c.size()) fail(who, fmt::format("input {} ran out of chunks", o));
      last = writeChunk(out, c[next[size_t(o)]++], b);
    }
    out[last].stop = b + 1 + s.stop;
  }
  for (int i = 0; i < n; ++i)
    if (next[size_t(i)] != chunks[size_t(i)].size())
      fail(who, fmt::format("input {} has {} chunk(s) left when the selector ends", i, chunks[size_t(i)].size() - next[size_t(i)]));
  out.push_back(Token::done());
  return out;
}

std::pair<TokenStream, TokenStream> eagerMerge(const std::vector<TokenStream>& in, int b,
                                               const std::vector<int>& arrivalOrder) {
  const std::string who = "EagerMerge";
  const int n = int(in.size());
  std::vector<std::vector<Chunk>> chunks = innerChunks(in, b, who);
  std::vector<size_t> count(size_t(n), 0);
  for (int i : arrivalOrder) {
    if (i < 0 || i >= n) fail(who, fmt::format("arrival order names input {} of {}", i, n));
    ++count[size_t(i)];
  }
  for (int i = 0; i < n; ++i)
    if (count[size_t(i)] != chunks[size_t(i)].size())
      fail(who, fmt::format("arrival order takes {} chunk(s) from input {}, which has {}", count[size_t(i)], i,
                            chunks[size_t(i)].size()));
  std::vector<size_t> next(size_t(n), 0);
  TokenStream data, sel;
  for (int i : arrivalOrder) {
    writeChunk(data, chunks[size_t(i)][next[size_t(i)]++], b);
    sel.push_back(selectorToken({i}, 0));
  }
  data.push_back(Token::done());
  sel.push_back(Token::done());
  return {std::move(data), std::move(sel)};
}

std::pair<TokenStream, TokenStream> reshape(const TokenStream& in, int64_t chunk, int b, bool pad,
                                            int64_t tileRows, int64_t tileCols) {
  const std::string who = "Reshape";
  if (chunk < 1) fail(who, "chunk size must be >= 1");
  if (b < 0) fail(who, "negative rank b");
  if (pad && b > 0) fail(who, "only an innermost split (b = 0) may pad");
  size_t n = bodyLength(in, who);
  // Padding tiles carry zeros, or no values when the input's tiles have none (timing-only).
  const bool values = std::none_of(in.begin(), in.end(), [](const Token& t) { return t.kind == Kind::Data && !t.hasValues(); });
  TokenStream out, isPad;
  auto emit = [&](Token t, bool padding) {
    out.push_back(t);
    if (t.kind == Kind::Data) {
      isPad.push_back(flagToken(padding ? 1u : 0u, t.stop));
    } else {
      isPad.push_back(t);
    }
  };
  // Closes dim b after k entries (k % chunk != 0) whose last token is out.back(): pads or
  // leaves a short chunk, the final token getting stop `closing`.
  auto closeShort = [&](int64_t k, int closing) {
    if (pad) {
      for (int64_t p = k % chunk; p < chunk; ++p)
        emit(values ? zeroTile(tileRows, tileCols, p + 1 == chunk ? closing : 0)
                    : Token::shapeOnly(tileRows, tileCols, p + 1 == chunk ? closing : 0),
             true);
    } else if (b > 0) {
      fail(who, fmt::format("dim {} of {} entries does not divide into chunks of {}", b, k, chunk));
    } else {
      out.back().stop = closing;
      isPad.back().stop = closing;
    }
  };
  int64_t k = 0;  // entries of dim b seen in the current run
  for (size_t i = 0; i < n; ++i) {
    Token t = in[i];
    if (t.stop < b) {  // inside an entry of dim b
      emit(t, false);
      continue;
    }
    if (b == 0 && t.kind == Kind::Stop) {  // an empty dim-0 group
      if (k != 0) fail(who, "a stop-only token closes a non-empty group (its stop belongs on the last element)");
      t.stop += 1;
      emit(t, false);
      continue;
    }
    // t closes entry k of dim b.
    if (t.stop == b) {
      t.stop = (k + 1) % chunk == 0 ? b + 1 : b;
      emit(t, false);
      ++k;
      continue;
    }
    int closing = t.stop + 1;
    ++k;
    if (k % chunk == 0) {
      t.stop = closing;
      emit(t, false);
    } else {
      t.stop = b;
      emit(t, false);
      closeShort(k, closing);
    }
    k = 0;
  }
  if (k % chunk != 0) closeShort(k, b + 1);  // dim b was the outermost: it ends at DONE
  out.push_back(Token::done());
  isPad.push_back(Token::done());
  return {std::move(out), std::move(isPad)};
}

TokenStream expand(const TokenStream& in, const TokenStream& ref, int b) {
  const std::string who = "Expand";
  std::vector<Chunk> chunks = splitChunks(ref, b, who + " ref");
  size_t nIn = bodyLength(in, who);
  if (nIn != chunks.size())
    fail(who, fmt::format("input has {} token(s) for {} chunk(s) of the reference", nIn, chunks.size()));
  TokenStream out;
  for (size_t k = 0; k < chunks.size(); ++k) {
    const Chunk& c = chunks[k];
    const Token& x = in[k];
    if (x.stop != c.close)
      fail(who, fmt::format("chunk {}: input stop {} but the reference closes with stop {}", k, x.stop, c.close));
    if (c.outer || c.empty) {  // no element: the reference's stop-only token
      if (c.outer && x.kind != Kind::Stop) fail(who, fmt::format("chunk {}: the reference has an empty group here", k));
      out.push_back(c.toks.front());
      continue;
    }
    if (x.kind != Kind::Data) fail(who, fmt::format("chunk {}: input is stop-only but the reference has elements", k));
    for (const Token& r : c.toks) {
      if (r.kind == Kind::Data) {
        Token y = x;
        y.stop = r.stop;
        out.push_back(std::move(y));
      } else {
        out.push_back(r);
      }
    }
  }
  out.push_back(Token::done());
  return out;
}

namespace {
// Scan(add) and Scan(max): the running tile starts as +0 + x (add) or as x itself (max).
TokenStream scanTiles(const TokenStream& in, int b, bool max, bool exclusive) {
  const std::string who = exclusive ? "Scan(max_exclusive)" : max ? "Scan(max)" : "Scan(add)";
  if (b < 0) fail(who, "negative rank b");
  enableFtzDaz();
  size_t n = bodyLength(in, who);
  TokenStream out;
  std::vector<uint32_t> acc;
  int64_t rows = 0, cols = 0;
  bool any = false;
  for (size_t i = 0; i < n; ++i) {
    const Token& t = in[i];
    if (t.kind == Kind::Data && !t.hasValues()) {  // timing-only: the sum's shape
      out.push_back(Token::shapeOnly(t.rows, t.cols, t.stop));
    } else if (t.kind == Kind::Data) {
      if (int64_t(t.data->size()) != t.words()) fail(who, fmt::format("token {} is not a tile", i));
      if (!any) {
        rows = t.rows, cols = t.cols;
        acc.assign(t.data->size(), 0u);  // +0
      } else if (t.rows != rows || t.cols != cols) {
        fail(who, fmt::format("token {}: a {}x{} tile in a group of {}x{} tiles", i, t.rows, t.cols, rows, cols));
      }
      // exclusive: the running max before this tile (-inf for a group's first)
      std::vector<uint32_t> before;
      if (exclusive) before = any ? acc : std::vector<uint32_t>(acc.size(), 0xFF800000u);
      for (size_t w = 0; w < acc.size(); ++w)
        acc[w] = !max ? fp32Add(acc[w], (*t.data)[w]) : any ? fp32Max(acc[w], (*t.data)[w]) : (*t.data)[w];
      any = true;
      Token o;
      o.rows = rows;
      o.cols = cols;
      o.stop = t.stop;
      o.data = std::make_shared<const std::vector<uint32_t>>(exclusive ? std::move(before) : acc);
      out.push_back(std::move(o));
    } else {
      out.push_back(t);
    }
    if (t.stop >= b) any = false;  // the group of the inner b dims ends: re-initialise
  }
  out.push_back(Token::done());
  return out;
}
}  // namespace

TokenStream scanAdd(const TokenStream& in, int b) { return scanTiles(in, b, false, false); }

TokenStream scanMax(const TokenStream& in, int b) { return scanTiles(in, b, true, false); }

TokenStream scanMaxExclusive(const TokenStream& in, int b) { return scanTiles(in, b, true, true); }

TokenStream flatMapRows(const TokenStream& in, bool dropPadding, const TokenStream& isPadding) {
  const std::string who = "FlatMap(rows)";
  size_t n = bodyLength(in, who);
  if (dropPadding && isPadding.size() != in.size())
    fail(who, fmt::format("is-padding stream has {} token(s), input {}", isPadding.size(), in.size()));
  TokenStream out;
  for (size_t i = 0; i < n; ++i) {
    const Token& t = in[i];
    if (dropPadding && (isPadding[i].kind != t.kind || isPadding[i].stop != t.stop))
      fail(who, fmt::format("is-padding stream disagrees with the input at token {}", i));
    if (t.kind == Kind::Stop) {
      out.push_back(Token::stopOnly(t.stop + 1));
      continue;
    }
    if (t.hasValues() && int64_t(t.data->size()) != t.words()) fail(who, fmt::format("token {} is not a tile", i));
    const std::vector<uint32_t>* flags = nullptr;
    if (dropPadding) {
      flags = isPadding[i].data.get();
      if (!flags || (int64_t(flags->size()) != t.rows && flags->size() != 1))
        fail(who, fmt::format("token {}: is-padding element has neither {} words nor one", i, t.rows));
    }
    size_t before = out.size();
    for (int64_t r = 0; r < t.rows; ++r) {
      if (flags && (*flags)[flags->size() == 1 ? 0 : size_t(r)] != 0) continue;
      Token row = Token::shapeOnly(1, t.cols, 0);
      if (t.hasValues())
        row.data = std::make_shared<const std::vector<uint32_t>>(t.data->begin() + r * t.cols,
                                                                 t.data->begin() + (r + 1) * t.cols);
      out.push_back(std::move(row));
    }
    if (out.size() == before) {
      out.push_back(Token::stopOnly(t.stop + 1));  // every row dropped: an empty group
    } else {
      out.back().stop = t.stop + 1;
    }
  }
  out.push_back(Token::done());
  return out;
}

std::vector<TokenStream> parallelize(const TokenStream& in, int n) {
  const std::string who = "Parallelize";
  if (n < 1) fail(who, "needs at least one output");
  size_t len = bodyLength(in, who);
  int rank = 0;
  for (size_t i = 0; i < len; ++i) rank = std::max(rank, in[i].stop);
  std::vector<Chunk> chunks = splitChunks(in, rank, who);
  std::vector<TokenStream> out(static_cast<size_t>(n));
  for (size_t k = 0; k < chunks.size(); ++k)
    for (const Token& t : chunks[k].toks) out[k % size_t(n)].push_back(t);
  for (TokenStream& o : out) o.push_back(Token::done());
  return out;
}

int64_t countChunks(const TokenStream& s, int b) {
  std::vector<Chunk> chunks = splitChunks(s, b, "EagerMerge input");
  return std::count_if(chunks.begin(), chunks.end(), [](const Chunk& c) { return !c.outer; });
}

}  // namespace stepgen
