// Unit tests for stepgen::DramModel (docs/hardware.md section 6). Every expected cycle
// number below is worked out by hand in the comment next to it, from the rule
//   start = max(t, next_free[ch], startup); next_free[ch] = start + ii; done = start + latency
// with ch = dramChannel(addr) = p % channels for the piece indices p < 32 used here.
#include <catch2/catch.hpp>

#include "common/dram.hpp"

#include <cstring>
#include <stdexcept>
#include <vector>

using stepgen::DramModel;
using stepgen::DramTiming;

namespace {
DramTiming timing(int ch, uint64_t lat, uint64_t ii, uint64_t startup) {
    DramTiming t;
    t.channels = ch;
    t.latency = lat;
    t.ii = ii;
    t.startup = startup;
    return t;
}
// Delivers AG `ag`'s responses as early as the model allows, one per cycle, starting at
// cycle `from`; returns the delivery cycles.
std::vector<uint64_t> drain(DramModel& d, int ag, uint64_t from, uint64_t limit = 1000) {
    std::vector<uint64_t> out;
    for (uint64_t c = from; c < limit && d.outstandingReads(ag) > 0; ++c)
        if (d.responseReady(ag, c)) {
            d.popResponse(ag, c);
            out.push_back(c);
        }
    return out;
}
}  // namespace

TEST_CASE("dram: 2 channels, latency 10, ii 2, startup 5, four consecutive reads", "[dram]") {
    // Requests (AG 0, one piece each) at cycles 0,1,2,3 to pieces 0,1,2,3 (bytes 0,64,128,192):
    //   p0 t=0 ch0: start = max(0, 0, 5) = 5, next_free[0] = 7, done = 15
    //   p1 t=1 ch1: start = max(1, 0, 5) = 5, next_free[1] = 7, done = 15
    //   p2 t=2 ch0: start = max(2, 7, 5) = 7, next_free[0] = 9, done = 17
    //   p3 t=3 ch1: start = max(3, 7, 5) = 7, next_free[1] = 9, done = 17
    // In order, one per cycle: delivered at 15, 16 (p1 was ready at 15 but p0 took 15), 17, 18.
    DramModel d(timing(2, 10, 2, 5), 4096, 1);
    for (uint64_t i = 0; i < 4; ++i) d.request(0, false, {i * 64}, nullptr, i);
    REQUIRE(d.outstandingReads(0) == 4);
    REQUIRE(d.responseReadyCycle(0) == 15);
    REQUIRE_FALSE(d.responseReady(0, 14));
    REQUIRE(d.responseReady(0, 15));
    CHECK(drain(d, 0, 0) == std::vector<uint64_t>{15, 16, 17, 18});
    CHECK(d.readBytes() == 4 * 64);
    CHECK(d.writeBytes() == 0);
    CHECK(d.lastWriteDone() == 0);
    // A fifth read at t=20 to piece 0: start = max(20, 9, 5) = 20, done = 30.
    d.request(0, false, {0}, nullptr, 20);
    CHECK(d.responseReadyCycle(0) == 30);
}

TEST_CASE("dram: one response per AG per cycle", "[dram]") {
    // 1 channel, latency 3, ii 1, startup 0: reads at t=0 (piece 0) and t=0 (piece 1) from
    // two calls in the same cycle: p0 start 0 done 3; p1 start max(0,1)=1 done 4.
    // A third read at t=0: start 2, done 5. All ready by 5; delivered 3, 4, 5.
    DramModel d(timing(1, 3, 1, 0), 1024, 1);
    d.request(0, false, {0}, nullptr, 0);
    d.request(0, false, {64}, nullptr, 0);
    d.request(0, false, {128}, nullptr, 0);
    // At cycle 10 all three are complete, but only one may be delivered per cycle.
    REQUIRE(d.responseReady(0, 10));
    d.popResponse(0, 10);
    CHECK_FALSE(d.responseReady(0, 10));
    CHECK_THROWS_AS(d.popResponse(0, 10), std::logic_error);
    CHECK(d.responseReady(0, 11));
    d.popResponse(0, 11);
    d.popResponse(0, 12);
    CHECK(d.outstandingReads(0) == 0);
    CHECK_THROWS_AS(d.responseData(0), std::logic_error);
}

TEST_CASE("dram: multi-piece requests complete with their latest piece", "[dram]") {
    // 2 channels, latency 10, ii 4, startup 0; P = 2 pieces per request.
    DramModel d(timing(2, 10, 4, 0), 4096, 2);
    // AG 0 at t=0, pieces 0 (ch0) and 1 (ch1): both start at 0, done 10 -> ready 10.
    d.request(0, false, {0, 64}, nullptr, 0);
    CHECK(d.responseReadyCycle(0) == 10);
    // AG 1 at t=0, pieces 2 (ch0) and 4 (ch0): piece 2 start max(0, 4) = 4 (next_free 8),
    // piece 4 start max(0, 8) = 8 (next_free 12), done 18 -> ready 18.
    d.request(1, false, {128, 256}, nullptr, 0);
    CHECK(d.responseReadyCycle(1) == 18);
    // AG 0 again at t=1, pieces 3 (ch1) and 5 (ch1): ch1 next_free = 4 ->
    // piece 3 start 4 (next_free 8), piece 5 start 8, done 18 -> ready 18.
    d.request(0, false, {192, 320}, nullptr, 1);
    CHECK(d.responseData(0).size() == 128);
    CHECK(drain(d, 0, 0) == std::vector<uint64_t>{10, 18});
    CHECK(drain(d, 1, 0) == std::vector<uint64_t>{18});
    CHECK(d.readBytes() == 6 * 64);
}

TEST_CASE("dram: queues of different AGs are independent", "[dram]") {
    // 1 channel, latency 5, ii 1, startup 0. AG 0 reads at t=0 (start 0, done 5);
    // AG 1 reads at t=0 after it (start 1, done 6). AG 0 reads again at t=0 (start 2, done 7).
    // AG 1's first response (6) is deliverable before AG 0's second (7).
    DramModel d(timing(1, 5, 1, 0), 1024, 2);
    d.request(0, false, {0}, nullptr, 0);
    d.request(1, false, {64}, nullptr, 0);
    d.request(0, false, {128}, nullptr, 0);
    CHECK(d.outstandingReads() == 3);
    CHECK(drain(d, 1, 0) == std::vector<uint64_t>{6});
    CHECK(drain(d, 0, 0) == std::vector<uint64_t>{5, 7});
    CHECK(d.outstandingReads() == 0);
}

TEST_CASE("dram: posted writes, byte counters, data", "[dram]") {
    // 2 channels, latency 40, ii 2, startup 100.
    DramModel d(timing(2, 40, 2, 100), 1 << 16, 2);
    std::vector<uint8_t> w(128);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>(i * 3 + 1);
    // AG 1 writes pieces 10 (ch0) and 11 (ch1) at t=3: both start max(3, 0, 100) = 100, done 140.
    d.request(1, true, {640, 704}, w.data(), 3);
    CHECK(d.lastWriteDone() == 140);
    CHECK(d.outstandingReads() == 0);  // writes are posted
    CHECK(std::memcmp(d.mem() + 640, w.data(), 128) == 0);  // image updated at acceptance
    // AG 1 writes piece 12 (ch0) at t=4: start max(4, 102, 100) = 102, done 142.
    d.request(1, true, {768}, w.data(), 4);
    CHECK(d.lastWriteDone() == 142);
    // AG 0 reads piece 11 (ch1) at t=5: start max(5, 102, 100) = 102, done 142; the data is
    // what AG 1 wrote (captured at acceptance).
    d.request(0, false, {704}, nullptr, 5);
    CHECK(d.responseReadyCycle(0) == 142);
    CHECK(std::memcmp(d.responseData(0).data(), w.data() + 64, 64) == 0);
    // AG 1 writes piece 1 (ch1) at t=6: start max(6, 104, 100) = 104, done 144.
    d.request(1, true, {64}, w.data(), 6);
    CHECK(d.lastWriteDone() == 144);
    CHECK(d.writeBytes() == 4 * 64);
    CHECK(d.readBytes() == 64);
}

TEST_CASE("dram: lastWriteDone keeps the maximum", "[dram]") {
    // 2 channels, latency 10, ii 1, startup 0. Write piece 0 (ch0) at t=0 -> ch0 busy:
    // three more writes to ch0 at t=0 start 1, 2, 3 (done 11, 12, 13). Then a write to ch1 at
    // t=1 starts at 1 and completes at 11 < 13: lastWriteDone stays 13.
    DramModel d(timing(2, 10, 1, 0), 1024, 1);
    std::vector<uint8_t> w(64, 0xab);
    for (uint64_t k = 0; k < 4; ++k) d.request(0, true, {k * 128}, w.data(), 0);
    CHECK(d.lastWriteDone() == 13);
    d.request(0, true, {64}, w.data(), 1);
    CHECK(d.lastWriteDone() == 13);
}

TEST_CASE("dram: errors", "[dram]") {
    DramModel d(timing(2, 10, 2, 0), 1024, 1);
    std::vector<uint8_t> w(64);
    CHECK_THROWS_AS(d.request(0, false, {32}, nullptr, 0), std::invalid_argument);   // unaligned
    CHECK_THROWS_AS(d.request(0, false, {1024}, nullptr, 0), std::out_of_range);     // past the end
    CHECK_THROWS_AS(d.request(1, false, {0}, nullptr, 0), std::out_of_range);        // no AG 1
    CHECK_THROWS_AS(d.request(-1, false, {0}, nullptr, 0), std::out_of_range);
    CHECK_THROWS_AS(d.request(0, true, {0}, nullptr, 0), std::invalid_argument);     // no data
    CHECK_THROWS_AS(d.request(0, false, {}, nullptr, 0), std::invalid_argument);     // no pieces
    CHECK_THROWS_AS(d.popResponse(0, 0), std::logic_error);
    d.request(0, false, {960}, nullptr, 0);  // last piece: ok, done 10
    CHECK_THROWS_AS(d.popResponse(0, 9), std::logic_error);
    CHECK_NOTHROW(d.popResponse(0, 10));
    CHECK_THROWS_AS(DramModel(timing(0, 1, 1, 0), 64, 1), std::invalid_argument);
    CHECK_THROWS_AS(DramModel(timing(1, 1, 0, 0), 64, 1), std::invalid_argument);
}

TEST_CASE("dram: the channel hash spreads a power-of-two column stride", "[dram]") {
    // Pieces 0..31 keep p % channels.
    for (uint64_t p = 0; p < 32; ++p) CHECK(stepgen::dramChannel(p * 64, 8) == int(p % 8));
    // A tile column of a row-major fp32 matrix with 512 columns: rows 2048 B = 32 pieces
    // apart. h = 32r + r = 33r = r (mod 8): rows 0..7 use channels 0..7.
    for (uint64_t r = 0; r < 8; ++r) CHECK(stepgen::dramChannel(r * 2048, 8) == int(r));
}
