#pragma once
// Functional semantics of the dynamic STeP operators (docs/step_semantics.md#operators) as pure
// functions on token streams (sim/ir/tokens.hpp, the beat encoding of docs/hardware.md
// section 1). Not yet wired into the graph runner (generator/model/functional.cpp).
//
// Conventions shared by every function here
// -----------------------------------------
// * Streams: Data tokens carry the stop level of the element (0 = none); Stop tokens
//   (stop >= 1) close an empty group; every stream ends with exactly one Done. A stream
//   without a final Done, or with tokens after it, is rejected (std::invalid_argument).
// * Chunk at level b ("the next inner-b chunk", docs/step_semantics.md#chunks):
//   - b = 0: one Data element. Stop tokens carry no element: they are outer structure
//     (empty outer groups) and are not chunks.
//   - b >= 1: the tokens up to and including the first one whose stop >= b. Tokens with
//     stop < b inside it (including Stop tokens: empty inner groups) are kept as they are.
//     A Stop token with stop >= b while the chunk is still empty is an EMPTY CHUNK (the
//     same reading as Bufferize/Accum in functional.cpp: a stop-only beat at level >= b
//     closes a group of the inner b dims with no element).
//   - Tokens left over before Done that no stop >= b closes are an error (the operator's
//     rank is above the stream's rank, docs/step_semantics.md#shape-errors).
// * A chunk written to a rank-b output (Partition, EagerMerge) keeps its inner stops and
//   its last element gets stop b (the cap of a rank-b stream, sim/ir/stops.hpp); an
//   empty chunk is written as one Stop token of level b (b >= 1). The outer stops of the
//   input (levels > b) are dropped: the output shape is [dyn, D_{b-1}, ..., D_0].
// * Selector streams: Data tokens whose `sel` field lists the chosen outputs, ascending
//   and distinct (see selectorToken). Their own stop levels are the selector stream's
//   shape; their Stop tokens are empty outer groups of the selector stream.
#include <cstdint>
#include <utility>
#include <vector>

#include "ir/tokens.hpp"

namespace stepgen {

/// A selector element choosing `sel` (ascending, distinct output indices) with stop level
/// `stop`. Payload: a 1x1 tile whose one word is the bit mask of the chosen outputs < 32
/// (so that it occupies one beat, tokenBeats = 1); `sel` is authoritative.
Token selectorToken(std::vector<int> sel, int stop = 0);

/// A 1x1 Data token holding the raw word `word` with stop level `stop` (used for the
/// boolean is-padding stream of reshape: word 1 = padding, 0 = real element).
Token flagToken(uint32_t word, int stop = 0);

/// Partition(data, selector, N, b), docs/step_semantics.md#partition.
/// data: rank >= b, shape [..., D_b, D_{b-1}, ..., D_0]; sel: one selector element per
/// inner-b chunk of data (its Stop tokens are skipped). For the k-th selector element the
/// k-th chunk of data goes to every output it names (multi-hot duplicates the chunk; an
/// empty selection drops it). Output o is a rank-b stream of shape [dyn_o, D_{b-1}..D_0]:
/// the chunks it received in order, inner stops kept, each chunk's last element at stop b
/// (b = 0: every element at stop 0), an empty chunk (b >= 1) as STOP(b); the outer stops of
/// data are dropped. An output that receives nothing is just DONE.
/// Throws std::invalid_argument when n < 1 or b < 0, when a selector names an index outside
/// [0, n) or is not ascending/distinct, when the number of selector elements differs from
/// the number of chunks, or when data has tokens not closed at level b.
/// A fed-back selector (`starved` not null: the selector comes round a feedback cycle,
/// docs/graph_format.md#feedback-streams) may be longer than data: its spare elements are
/// dropped, as the partition unit drains them. Shorter, only the covered chunks are routed
/// and *starved is the number left (0 when every chunk got a selector element).
std::vector<TokenStream> partition(const TokenStream& data, const TokenStream& sel, int n, int b,
                                   size_t* starved = nullptr);

/// Map(fn: select, value v, n, initial c): the region-free signal of a feedback cycle
/// (docs/graph_format.md#feedback-streams). c initial one-hot selector elements {v}, then one
/// {v} per Data token of `in` (a tile of any shape: "this element is done"); in's Stop tokens
/// are dropped; all at stop 0; then DONE. A rank-0 selector stream of c + (elements of in).
/// Throws std::invalid_argument unless 0 <= v < n and c >= 0.
TokenStream selectSignals(const TokenStream& in, int value, int n, int64_t initial);

/// Reassemble(inputs[N], selector, b), docs/step_semantics.md#reassemble: the inverse of Partition.
/// in[i]: rank-b streams (chunks as Partition writes them); sel: selector stream of rank r.
/// For each selector element with stop level t, the next chunk of every selected input is
/// taken in ASCENDING input order (the model's "arrival order": deterministic) and the
/// chunks are concatenated into one group along a new dimension: inner stops kept, the last
/// element of each chunk at stop b (an empty chunk, b >= 1, as STOP(b)), and the group's
/// last token at stop b + 1 + t. A selector with no selected input gives an empty group:
/// STOP(b + 1 + t). A Stop token S_t of the selector stream (an empty outer group) becomes
/// STOP(b + 1 + t). Output shape [sel dims..., ragged (number selected), D_{b-1}..D_0].
/// With one-hot selectors of the same shape as data's outer dims [.., D_b] (selector stop =
/// data chunk stop - b), reassemble(partition(x, sel, n, b), sel, b) == Promote(x, b):
/// x's data in x's order with every stop s >= b raised to s + 1.
/// Throws std::invalid_argument on a bad selector index, an input that runs out of chunks,
/// or an input with chunks left over when the selector ends.
TokenStream reassemble(const std::vector<TokenStream>& in, const TokenStream& sel, int b);

/// EagerMerge(inputs[N], b), docs/step_semantics.md#eagermerge. arrivalOrder[k] is the input whose
/// chunk is forwarded k-th (decided by the timing model); whole inner-b chunks are forwarded,
/// never interleaved. Returns {data, selector}: data is a rank-b stream [dyn, D_{b-1}..D_0]
/// (chunks written as for Partition: last element at stop b, an empty chunk as STOP(b),
/// the inputs' outer stops dropped); selector is a rank-0 stream with one one-hot element
/// {i} (stop 0) per forwarded chunk. Both end with DONE.
/// Throws std::invalid_argument when an index is outside [0, N) or when input i's number of
/// chunks differs from the number of times i occurs in arrivalOrder.
std::pair<TokenStream, TokenStream> eagerMerge(const std::vector<TokenStream>& in, int b,
                                               const std::vector<int>& arrivalOrder);

/// Reshape(chunk S, b, pad), docs/step_semantics.md#reshape: splits dim b of shape
/// [..., D_b, D_{b-1}..D_0] into [..., ceil(D_b/S), S, D_{b-1}..D_0] (rank + 1).
/// Stop rules, for the token closing the k-th entry (0-based) of dim b (a Data or Stop token
/// with stop s >= b; for b = 0 every Data element is an entry):
///   s == b (dim b continues): stop b + 1 if (k + 1) % S == 0 (a chunk closes), else b;
///   s >  b (dim b ends):      stop s + 1 (the outer levels move up by one).
/// Stops < b are unchanged. For b = 0 a Stop token S_s (an empty dim-0 group) becomes
/// S_{s+1}. Dim b also ends at DONE (rank-b input): the last chunk then closes with b + 1.
/// Padding (pad, only b = 0): when dim 0 ends with D_0 % S != 0, S - D_0 % S padding
/// elements (tileRows x tileCols zero tiles) follow the last real element, which then keeps
/// stop 0; the last padding element gets the closing stop. Without pad a non-dividing
/// dim 0 gives a short (ragged) last chunk; for b >= 1 a non-dividing dim is an error.
/// Returns {data, isPadding}: isPadding has the same tokens (kinds and stops) as data, each
/// Data token a flagToken with word 1 for a padding element and 0 for a real one.
/// Throws std::invalid_argument on S < 1, b < 0, pad with b > 0, a non-dividing dim b >= 1,
/// or a Stop token closing a non-empty dim-0 group (b = 0).
std::pair<TokenStream, TokenStream> reshape(const TokenStream& in, int64_t chunk, int b, bool pad,
                                            int64_t tileRows, int64_t tileCols);

/// Expand(ref, b), docs/step_semantics.md#expand: broadcasts the size-1 inner b dims of `in` to the
/// shape of `ref`. `in` has ref's shape with its inner b dims of size 1, i.e. one token per
/// inner-b chunk of ref, carrying the chunk's closing stop. For each chunk of ref the next
/// token of `in` is taken: every Data token of the chunk is replaced by a copy of the in
/// element with the ref token's stop; Stop tokens of ref are copied. An empty ref chunk
/// (b >= 1) gives its STOP token (the in token is consumed). For b = 0 a ref Stop token
/// pairs with an in Stop token of the same level. Output shape = ref's shape.
/// RepeatStatic(n) is Promote(0) followed by Expand with a ref of n elements per group.
/// Throws std::invalid_argument when the stops of in and ref disagree, when in is a Stop
/// token where ref's chunk has elements, or when the token counts do not match.
TokenStream expand(const TokenStream& in, const TokenStream& ref, int b);

/// Scan(add, +0, b), docs/step_semantics.md#scan: like Accum(add, b) but emits after every element.
/// Each Data element is added word by word (fp32Add, sim/common/fp.hpp) to a running tile
/// starting from +0 and the running tile is emitted with the element's stop; a token with
/// stop >= b (Data or Stop) resets the running tile after it. Stop tokens are copied.
/// Output shape = input shape. (b = 0: every element is emitted as +0 + x.)
/// Throws std::invalid_argument when tiles of different shape meet inside a group.
TokenStream scanAdd(const TokenStream& in, int b);

/// Scan(max, b): as scanAdd with fp32Max (sim/common/fp.hpp), the group's first element taken
/// as it is (the running max of a group is its elements' max, not max(+0, ...)).
TokenStream scanMax(const TokenStream& in, int b);

/// Scan(max_exclusive, b): the exclusive form of scanMax: each element is replaced by the
/// running max of the elements before it in its group, a group's first by a tile of -inf
/// (0xFF800000). The single-pass softmax reads it as the previous running max m_{j-1}.
TokenStream scanMaxExclusive(const TokenStream& in, int b);

/// FlatMap(unpack rows, 1), docs/step_semantics.md#flatmap: each tile of R rows becomes a rank-1 group
/// of R 1-row tiles (a new innermost, possibly ragged, dimension). Rows keep stop 0; the
/// last emitted row of an element with stop s gets stop s + 1; a Stop token S_s becomes
/// S_{s+1}. With dropPadding, `isPadding` must have the same tokens as `in` (kinds and
/// stops), each Data token holding either R words (word r != 0: row r is padding) or one
/// word (the whole tile is padding); padding rows are not emitted, and an element all of
/// whose rows are padding gives an empty group STOP(s + 1). Without dropPadding isPadding
/// is ignored. Throws std::invalid_argument on a misaligned isPadding stream.
TokenStream flatMapRows(const TokenStream& in, bool dropPadding, const TokenStream& isPadding = {});

/// Parallelize(n): round-robin split of the outermost dimension. The stream's rank N is the
/// largest stop level in it (the last token of every rank-N tensor carries stop N, or is
/// STOP(N) when the tensor is empty); its tensors (chunks at level N; single elements when
/// N = 0) go to outputs 0, 1, ..., n-1, 0, ... unchanged (stops kept). Each output has the
/// input's rank; an output with no tensor is just DONE. Throws std::invalid_argument on n < 1.
std::vector<TokenStream> parallelize(const TokenStream& in, int n);

/// The number of inner-b chunks of `s` (empty chunks included, outer Stop tokens not): what
/// an EagerMerge forwards from this input. Throws std::invalid_argument as partition does.
int64_t countChunks(const TokenStream& s, int b);

}  // namespace stepgen
