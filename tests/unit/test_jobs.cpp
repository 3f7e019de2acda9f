// jobs/: a study point's options and report survive the JSON of a job list and its result
// files field by field (a merged study writes the same tables as a serial one only then),
// a job list is read back or refused with a located error, and FileLock excludes.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "jobs/job_list.hpp"
#include "jobs/verify_json.hpp"
#include "support/diag.hpp"
#include "support/files.hpp"

using namespace stepgen;
namespace fs = std::filesystem;

namespace {

fs::path freshDir(const std::string& tag) {
  const fs::path d = fs::temp_directory_path() / fmt::format("stepgen_jobs_{}_{}", tag, ::getpid());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

ModelResult someModel(int64_t k) {
  ModelResult m;
  m.timing.cycles = 1000 + k, m.timing.offchipReadBytes = 2000 + k, m.timing.offchipWriteBytes = 3000 + k;
  m.timing.deadlock = true, m.timing.stuck = {"s0 (a -> b) at token 3 of 9", "s1"};
  m.timing.sectionStart = {0, 77 + k}, m.timing.reloadWords = 5, m.timing.reloadExposedCycles = 6, m.timing.dramLate = 7;
  m.timing.mergeOrders = {{3, {0, 1, 1, 0}}, {12, {1}}}, m.timing.mergeOrderRevised = true;
  m.onchipBytes = 8, m.flops = 9, m.offchipBytes = 10, m.rooflineCycles = 11.25 + double(k), m.wallSeconds = 0.1 + 1e-17;
  return m;
}

RunResult someRun(uint64_t k) {
  RunResult r;
  r.status = "deadlock", r.cycles = 100 + k, r.doneCycle = 99, r.lastWriteDone = 98, r.simCycles = 97, r.configWords = 96;
  r.readBytes = 95, r.writeBytes = 94, r.outstandingReads = 3, r.muPeakWords = 92;
  r.sections = {{1, 2, 3}, {4, 5, 6}}, r.cfgWaitCycles = 91, r.reloadWrites = 90, r.configCycles = 89;
  r.stuck = {{7, "cu_0_1.in0", true, false}};
  r.wallSeconds = 1.0 / 3.0, r.cyclesPerSecond = 12345.678, r.message = "watchdog";
  return r;
}

void checkModel(const ModelResult& a, const ModelResult& b) {
  CHECK(a.timing.cycles == b.timing.cycles);
  CHECK(a.timing.offchipReadBytes == b.timing.offchipReadBytes);
  CHECK(a.timing.offchipWriteBytes == b.timing.offchipWriteBytes);
  CHECK(a.timing.deadlock == b.timing.deadlock);
  CHECK(a.timing.stuck == b.timing.stuck);
  CHECK(a.timing.sectionStart == b.timing.sectionStart);
  CHECK(a.timing.reloadWords == b.timing.reloadWords);
  CHECK(a.timing.reloadExposedCycles == b.timing.reloadExposedCycles);
  CHECK(a.timing.dramLate == b.timing.dramLate);
  CHECK(a.timing.mergeOrders == b.timing.mergeOrders);
  CHECK(a.timing.mergeOrderRevised == b.timing.mergeOrderRevised);
  CHECK(a.onchipBytes == b.onchipBytes);
  CHECK(a.flops == b.flops);
  CHECK(a.offchipBytes == b.offchipBytes);
  CHECK(a.rooflineCycles == b.rooflineCycles);
  CHECK(a.wallSeconds == b.wallSeconds);
}

void checkRun(const RunResult& a, const RunResult& b) {
  CHECK(a.status == b.status);
  CHECK(a.cycles == b.cycles);
  CHECK(a.doneCycle == b.doneCycle);
  CHECK(a.lastWriteDone == b.lastWriteDone);
  CHECK(a.simCycles == b.simCycles);
  CHECK(a.configWords == b.configWords);
  CHECK(a.readBytes == b.readBytes);
  CHECK(a.writeBytes == b.writeBytes);
  CHECK(a.outstandingReads == b.outstandingReads);
  CHECK(a.muPeakWords == b.muPeakWords);
  REQUIRE(a.sections.size() == b.sections.size());
  for (size_t i = 0; i < a.sections.size(); ++i) {
    CHECK(a.sections[i].start == b.sections[i].start);
    CHECK(a.sections[i].firstBeat == b.sections[i].firstBeat);
    CHECK(a.sections[i].lastBeat == b.sections[i].lastBeat);
  }
  CHECK(a.cfgWaitCycles == b.cfgWaitCycles);
  CHECK(a.reloadWrites == b.reloadWrites);
  CHECK(a.configCycles == b.configCycles);
  REQUIRE(a.stuck.size() == b.stuck.size());
  for (size_t i = 0; i < a.stuck.size(); ++i) {
    CHECK(a.stuck[i].index == b.stuck[i].index);
    CHECK(a.stuck[i].port == b.stuck[i].port);
    CHECK(a.stuck[i].valid == b.stuck[i].valid);
    CHECK(a.stuck[i].full == b.stuck[i].full);
  }
  CHECK(a.wallSeconds == b.wallSeconds);
  CHECK(a.cyclesPerSecond == b.cyclesPerSecond);
  CHECK(a.message == b.message);
}

}  // namespace

TEST_CASE("jobs: VerifyOptions survive their JSON, every field", "[jobs]") {
  VerifyOptions o;
  o.archPath = "a.yaml", o.graphPath = "g.yaml", o.outDir = "out/x", o.inputsDir = "in", o.seed = 4000000000u;
  o.minSections = 3, o.onChipCarry = false, o.trace = true, o.skipRtl = true, o.axi = true, o.hierarchical = false;
  o.watchdogCycles = 123456789012, o.buildCache = "cache", o.maxCycleErrorPercent = 2.5;
  const VerifyOptions b = verifyOptionsFromJson(nlohmann::json::parse(verifyOptionsJson(o).dump()), "test");
  CHECK(b.archPath == o.archPath);
  CHECK(b.graphPath == o.graphPath);
  CHECK(b.outDir == o.outDir);
  CHECK(b.inputsDir == o.inputsDir);
  CHECK(b.seed == o.seed);
  CHECK(b.minSections == o.minSections);
  CHECK(b.onChipCarry == o.onChipCarry);
  CHECK(b.trace == o.trace);
  CHECK(b.skipRtl == o.skipRtl);
  CHECK(b.axi == o.axi);
  CHECK(b.hierarchical == o.hierarchical);
  CHECK(b.watchdogCycles == o.watchdogCycles);
  CHECK(b.buildCache == o.buildCache);
  CHECK(b.maxCycleErrorPercent == o.maxCycleErrorPercent);
  o.hierarchical.reset();  // unset: verify decides
  CHECK(!verifyOptionsFromJson(verifyOptionsJson(o), "test").hierarchical.has_value());
  nlohmann::json broken = verifyOptionsJson(o);
  broken.erase("seed");
  CHECK_THROWS_WITH(verifyOptionsFromJson(broken, "job 3"), Catch::Contains("job 3") && Catch::Contains("seed"));
}

TEST_CASE("jobs: VerifyReport survives its JSON, every field but the tensors", "[jobs]") {
  VerifyReport r;
  r.model = someModel(1);
  r.rtl = someRun(2);
  r.buildSeconds = 12.5, r.hierarchical = true, r.outputsEqual = true, r.firstMismatch = "out[3,17]: model 0x1 rtl 0x2";
  r.cycleErrorPercent = -0.123456789, r.maxCycleErrorPercent = 5, r.compileSeconds = 0.25, r.sections = 4;
  r.reloadedSections = 2, r.carriedDramBytes = 4096, r.carriedOnchipBytes = 8192;
  r.axiRan = true, r.axi = someRun(3), r.axiMismatch = "m", r.axiBuildSeconds = 7.5;
  r.rtlDecisions = 40, r.differingDecisions = 3, r.replay = someModel(4), r.replayCycleErrorPercent = 0.5, r.replayError = "e";
  const VerifyReport b = verifyReportFromJson(nlohmann::json::parse(verifyReportJson(r).dump()), "test");
  checkModel(b.model, r.model);
  checkRun(b.rtl, r.rtl);
  CHECK(b.buildSeconds == r.buildSeconds);
  CHECK(b.hierarchical == r.hierarchical);
  CHECK(b.outputsEqual == r.outputsEqual);
  CHECK(b.firstMismatch == r.firstMismatch);
  CHECK(b.cycleErrorPercent == r.cycleErrorPercent);
  CHECK(b.maxCycleErrorPercent == r.maxCycleErrorPercent);
  CHECK(b.compileSeconds == r.compileSeconds);
  CHECK(b.sections == r.sections);
  CHECK(b.reloadedSections == r.reloadedSections);
  CHECK(b.carriedDramBytes == r.carriedDramBytes);
  CHECK(b.carriedOnchipBytes == r.carriedOnchipBytes);
  CHECK(b.axiRan == r.axiRan);
  checkRun(b.axi, r.axi);
  CHECK(b.axiMismatch == r.axiMismatch);
  CHECK(b.axiBuildSeconds == r.axiBuildSeconds);
  CHECK(b.rtlDecisions == r.rtlDecisions);
  CHECK(b.differingDecisions == r.differingDecisions);
  REQUIRE(b.replay.has_value());
  checkModel(*b.replay, *r.replay);
  CHECK(b.replayCycleErrorPercent == r.replayCycleErrorPercent);
  CHECK(b.replayError == r.replayError);
  // A run that did not report ("error") keeps its figures too.
  r.rtl.status = "error";
  checkRun(verifyReportFromJson(verifyReportJson(r), "test").rtl, r.rtl);
  r.replay.reset();
  CHECK(!verifyReportFromJson(verifyReportJson(r), "test").replay.has_value());
}

TEST_CASE("jobs: a point's DiagError survives its JSON", "[jobs]") {
  const DiagError e("G-203", {"g.yaml", 12, 5}, "unknown operator 'Foo'");
  const DiagError b = diagErrorFromJson(diagErrorJson(e));
  REQUIRE(b.diags.size() == 1);
  CHECK(b.diags[0].id == "G-203");
  CHECK(b.diags[0].loc.file == "g.yaml");
  CHECK(b.diags[0].loc.line == 12);
  CHECK(b.diags[0].loc.col == 5);
  CHECK(b.diags[0].message == "unknown operator 'Foo'");
}

TEST_CASE("jobs: a job list is read back, or refused naming its file and field", "[jobs]") {
  const fs::path d = freshDir("list");
  JobList l;
  l.dir = d, l.cwd = "/somewhere", l.study = {"study", "regions", "--regions", "4"};
  VerifyOptions o;
  o.outDir = "p0";
  l.jobs.push_back({0, false, "p0", verifyOptionsJson(o)});
  o.outDir = "p1";
  l.jobs.push_back({1, true, "p1", verifyOptionsJson(o)});
  writeJobList(l, "/bin/stepgen");
  const JobList b = readJobList(d);
  CHECK(b.cwd == l.cwd);
  CHECK(b.study == l.study);
  REQUIRE(b.jobs.size() == 2);
  CHECK(b.jobs[1].label == "p1");
  CHECK(!b.jobs[0].build);
  CHECK(b.jobs[1].build);
  CHECK(verifyOptionsFromJson(b.jobs[1].verify, "t").outDir == "p1");
  // Job 1 is a build: its line comes first.
  CHECK(readText(d / "commands.txt") ==
        fmt::format("'/bin/stepgen' jobs exec '{0}' 1\n'/bin/stepgen' jobs exec '{0}' 0\n", fs::absolute(d).string()));
  for (const char* sub : {"results", "status", "logs"}) CHECK(fs::is_directory(d / sub));

  auto idOf = [&](const std::string& text) {
    writeFile(d / "jobs.json", text);
    try {
      readJobList(d);
    } catch (const DiagError& e) {
      CHECK(e.diags.at(0).loc.file == (d / "jobs.json").string());
      return e.diags.at(0).id + ": " + e.diags.at(0).message;
    }
    return std::string("accepted");
  };
  CHECK_THAT(idOf("{"), Catch::StartsWith("J-601: the job list is not valid JSON"));
  CHECK_THAT(idOf(R"({"format": "other"})"), Catch::StartsWith("J-601: not a stepgen job list"));
  CHECK_THAT(idOf(R"({"format": "stepgen-jobs", "version": 99})"), Catch::StartsWith("J-602: job list of format version 99"));
  CHECK_THAT(idOf(R"({"format": "stepgen-jobs", "version": 1, "cwd": "/", "study": []})"),
             Catch::StartsWith("J-601: field 'jobs' is missing or malformed"));
  CHECK_THAT(idOf(R"({"format": "stepgen-jobs", "version": 1, "cwd": "/", "study": [], "jobs": [{"id": 0, "kind": "x", "label": "x", "verify": {}}]})"),
             Catch::StartsWith("J-601: field 'jobs': job 0 has kind 'x'"));
  CHECK_THAT(idOf(R"({"format": "stepgen-jobs", "version": 1, "cwd": "/", "study": [], "jobs": [{"id": 1, "kind": "point", "label": "x", "verify": {}}]})"),
             Catch::StartsWith("J-601: field 'jobs': job 1 is listed where job 0 belongs"));
  fs::remove(d / "jobs.json");
  CHECK_THAT(idOf("").substr(0, 5), Catch::Equals("J-601"));  // an empty file is not JSON either
  fs::remove(d / "jobs.json");
  CHECK_THROWS_AS(readJobList(d), DiagError);
  fs::remove_all(d);
}

TEST_CASE("FileLock: a second process waits until the first releases the lock", "[jobs]") {
  const fs::path d = freshDir("lock");
  const fs::path lockFile = d / "x.lock", log = d / "order.txt";
  auto append = [&](const std::string& s) {
    const std::string old = readText(log);
    writeFile(log, old + s);
  };
  const pid_t pid = fork();
  if (pid == 0) {
    {
      FileLock l(lockFile);
      append("child-in\n");
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      append("child-out\n");
    }
    _exit(0);
  }
  for (int i = 0; i < 1000 && readText(log).empty(); ++i)  // until the child holds the lock (10 s at most)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  {
    FileLock l(lockFile);
    append("parent-in\n");
  }
  int st = 0;
  waitpid(pid, &st, 0);
  CHECK(readText(log) == "child-in\nchild-out\nparent-in\n");
  fs::remove_all(d);
}
