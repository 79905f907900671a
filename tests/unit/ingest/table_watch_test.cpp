// TableWatch over a fake HBase master: which verdicts it reaches, what it reports (once per
// change), what it leaves alone when HBase cannot answer, and when its thread checks.

#include "hbingest/ingest/table_watch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hbingest/ingest/readiness.h"

namespace hbingest::ingest {
namespace {

using namespace std::chrono_literals;
using connectors::TableStatus;

class FakeMaster final : public connectors::TableStatusSource {
 public:
  // family_missing: the table lacks every family asked about, unless set_missing() named some.
  connectors::TableState table_status(const connectors::TableName& table,
                                      const std::vector<std::string>& families) override {
    std::unique_lock lock(mutex_);
    if (delay_ > 0ms) {
      ++checks_started_;
      const auto delay = delay_;
      lock.unlock();
      std::this_thread::sleep_for(delay);
      lock.lock();
    }
    ++checks_[table.qualified()];
    std::string asked;
    for (const auto& family : families) asked += (asked.empty() ? "" : ",") + family;
    families_asked_.push_back(asked);
    if (unreachable_) throw connectors::HBaseError("connection refused", "gw:9090", "tableExists", true);
    const auto it = status_.find(table.qualified());
    const TableStatus status = it == status_.end() ? TableStatus::writable : it->second;
    if (status != TableStatus::family_missing) return {status, {}};
    const auto missing = missing_.find(table.qualified());
    return {status, missing == missing_.end() ? families : missing->second};
  }
  // Creates the table (writable from now on) unless set_create_fails() said otherwise.
  connectors::EnsureResult ensure_table(const connectors::TableSpec& spec) override {
    std::lock_guard lock(mutex_);
    created_.push_back(spec);
    if (create_fails_)
      throw connectors::HBaseError("AccessDeniedException: no CREATE", "gw:9090", "createTable", false);
    status_[spec.ns + ":" + spec.table] = TableStatus::writable;
    return {connectors::EnsureOutcome::created, {}};
  }
  void set_create_fails(bool fails) {
    std::lock_guard lock(mutex_);
    create_fails_ = fails;
  }
  std::vector<connectors::TableSpec> created() const {
    std::lock_guard lock(mutex_);
    return created_;
  }
  void set_missing(const std::string& table, std::vector<std::string> families) {
    std::lock_guard lock(mutex_);
    status_[table] = TableStatus::family_missing;
    missing_[table] = std::move(families);
  }
  void set(const std::string& table, TableStatus status) {
    std::lock_guard lock(mutex_);
    status_[table] = status;
  }
  void set_unreachable(bool unreachable) {
    std::lock_guard lock(mutex_);
    unreachable_ = unreachable;
  }
  // Every check takes this long first (a gateway that answers slowly or only at the read timeout).
  void set_delay(std::chrono::milliseconds delay) {
    std::lock_guard lock(mutex_);
    delay_ = delay;
  }
  int checks(const std::string& table) const {
    std::lock_guard lock(mutex_);
    const auto it = checks_.find(table);
    return it == checks_.end() ? 0 : it->second;
  }
  int checks_started() const {
    std::lock_guard lock(mutex_);
    return checks_started_;
  }
  std::vector<std::string> families_asked() const {
    std::lock_guard lock(mutex_);
    return families_asked_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, TableStatus> status_;
  std::map<std::string, std::vector<std::string>> missing_;
  std::map<std::string, int> checks_;
  std::vector<std::string> families_asked_;
  std::vector<connectors::TableSpec> created_;
  bool create_fails_ = false;
  bool unreachable_ = false;
  std::chrono::milliseconds delay_{0};
  int checks_started_ = 0;  // delayed checks only
};

class RecordingObserver final : public PipelineObserver {
 public:
  void on_table_available(const std::string& table, bool available) override {
    std::lock_guard lock(mutex_);
    reports_.emplace_back(table, available);
  }
  std::vector<std::pair<std::string, bool>> reports() const {
    std::lock_guard lock(mutex_);
    return reports_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<std::string, bool>> reports_;
};

using Reports = std::vector<std::pair<std::string, bool>>;

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout = 5s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TableWatchOptions hourly() {
  TableWatchOptions options;
  options.families = {"d"};
  options.interval = 1h;
  options.recheck = 1h;
  options.min_gap = 1ms;
  return options;
}

TEST(TableWatch, TheFirstCheckReportsEveryRouteTableOnce) {
  FakeMaster master;
  RecordingObserver observer;
  TableWatch watch({"default:a", "default:b", "default:a"}, hourly(), master, observer);
  watch.check();
  EXPECT_EQ(observer.reports(), (Reports{{"default:a", true}, {"default:b", true}}));
  EXPECT_EQ(master.checks("default:a"), 1) << "a table shared by two routes is checked once";
  EXPECT_EQ(master.families_asked(), (std::vector<std::string>{"d", "d"}));
  EXPECT_TRUE(watch.writable("default:a"));
  EXPECT_TRUE(watch.problems().empty());
}

TEST(TableWatch, EachTableIsAskedForItsOwnFamiliesAndEveryMissingOneIsNamed) {
  FakeMaster master;
  RecordingObserver observer;
  auto options = hourly();
  options.families = {"d"};
  options.table_families = {{"default:orders", {"d", "meta"}}};
  TableWatch watch({"default:events", "default:orders"}, options, master, observer);
  watch.check();
  EXPECT_EQ(master.families_asked(), (std::vector<std::string>{"d", "d,meta"}));
  master.set("default:orders", TableStatus::family_missing);
  watch.check();
  EXPECT_FALSE(watch.writable("default:orders"));
  EXPECT_TRUE(watch.writable("default:events"));
  EXPECT_EQ(watch.problems(),
            (std::vector<std::string>{"HBase table default:orders has no column families 'd', 'meta'"}));
  // One family added back: still unavailable, the sentence names the one left.
  master.set_missing("default:orders", {"meta"});
  watch.check();
  EXPECT_EQ(watch.problems(), (std::vector<std::string>{"HBase table default:orders has no column family 'meta'"}));
  EXPECT_EQ(observer.reports(),
            (Reports{{"default:events", true}, {"default:orders", true}, {"default:orders", false}}));
  master.set("default:orders", TableStatus::writable);
  watch.check();
  EXPECT_TRUE(watch.writable("default:orders"));
  EXPECT_TRUE(watch.problems().empty());
}

TEST(TableWatch, ADisabledTableIsUnavailableUntilEnabledAndEachChangeIsReportedOnce) {
  FakeMaster master;
  RecordingObserver observer;
  TableWatch watch({"default:a", "default:b"}, hourly(), master, observer);
  watch.check();
  master.set("default:a", TableStatus::disabled);
  watch.check();
  EXPECT_FALSE(watch.writable("default:a"));
  EXPECT_TRUE(watch.writable("default:b"));
  EXPECT_EQ(watch.problems(), (std::vector<std::string>{"HBase table default:a is disabled"}));
  watch.check();
  watch.check();
  EXPECT_EQ(observer.reports(), (Reports{{"default:a", true}, {"default:b", true}, {"default:a", false}}))
      << "a state that lasts is reported once, not at every check";

  master.set("default:a", TableStatus::writable);
  watch.check();
  EXPECT_TRUE(watch.writable("default:a"));
  EXPECT_TRUE(watch.problems().empty());
  EXPECT_EQ(observer.reports().back(), (std::pair<std::string, bool>{"default:a", true}));
  EXPECT_EQ(observer.reports().size(), 4u);
}

TEST(TableWatch, AMissingTableOrFamilyIsUnavailableAndTheReasonSaysWhich) {
  FakeMaster master;
  RecordingObserver observer;
  TableWatch watch({"ns1:a"}, hourly(), master, observer);
  master.set("ns1:a", TableStatus::missing);
  watch.check();
  EXPECT_FALSE(watch.writable("ns1:a"));
  EXPECT_EQ(watch.problems(), (std::vector<std::string>{"HBase table ns1:a does not exist"}));
  // Re-created without the family: still unavailable, for another reason.
  master.set("ns1:a", TableStatus::family_missing);
  watch.check();
  EXPECT_FALSE(watch.writable("ns1:a"));
  EXPECT_EQ(watch.problems(), (std::vector<std::string>{"HBase table ns1:a has no column family 'd'"}));
  EXPECT_EQ(observer.reports(), (Reports{{"ns1:a", false}})) << "the gauge did not change";
}

TEST(TableWatch, ACheckHBaseCannotAnswerChangesNoVerdict) {
  FakeMaster master;
  RecordingObserver observer;
  TableWatch watch({"default:a"}, hourly(), master, observer);
  master.set_unreachable(true);
  watch.check();
  EXPECT_TRUE(watch.writable("default:a")) << "never checked: the writers find out for themselves";
  EXPECT_TRUE(watch.problems().empty());
  EXPECT_TRUE(observer.reports().empty());

  master.set_unreachable(false);
  master.set("default:a", TableStatus::disabled);
  watch.check();
  master.set_unreachable(true);
  watch.check();
  EXPECT_FALSE(watch.writable("default:a")) << "an unanswered check keeps the last verdict";
  EXPECT_EQ(observer.reports(), (Reports{{"default:a", false}}));
}

TEST(TableWatch, ATableNoRouteWritesIsNeverHeld) {
  FakeMaster master;
  RecordingObserver observer;
  TableWatch watch({"default:a"}, hourly(), master, observer);
  watch.check();
  EXPECT_TRUE(watch.writable("default:other"));
  EXPECT_EQ(master.checks("default:other"), 0);
}

TEST(TableWatch, ChecksAtStartAndAtEveryInterval) {
  FakeMaster master;
  RecordingObserver observer;
  auto options = hourly();
  options.interval = 5ms;
  TableWatch watch({"default:a"}, options, master, observer);
  watch.start();
  EXPECT_TRUE(eventually([&] { return master.checks("default:a") >= 3; }));
}

TEST(TableWatch, AWriteFailureBringsTheNextCheckForward) {
  FakeMaster master;
  RecordingObserver observer;
  TableWatch watch({"default:a"}, hourly(), master, observer);
  watch.start();
  ASSERT_TRUE(eventually([&] { return master.checks("default:a") == 1; })) << "the first check runs at once";
  master.set("default:a", TableStatus::disabled);
  watch.write_failed("default:a");
  EXPECT_TRUE(eventually([&] { return !watch.writable("default:a"); }))
      << "a write failure is checked now, not an hour later";
}

TEST(TableWatch, AnUnavailableTableIsRecheckedUntilItIsBack) {
  FakeMaster master;
  RecordingObserver observer;
  auto options = hourly();
  options.recheck = 5ms;
  master.set("default:a", TableStatus::missing);
  TableWatch watch({"default:a"}, options, master, observer);
  watch.start();
  ASSERT_TRUE(eventually([&] { return !watch.writable("default:a"); }));
  // Held writes do not fail, so no write failure will ask: the watch must look by itself.
  master.set("default:a", TableStatus::writable);
  EXPECT_TRUE(eventually([&] { return watch.writable("default:a"); }));
}

TEST(TableWatch, StopsAtOnceWhileWaitingForItsNextCheck) {
  FakeMaster master;
  RecordingObserver observer;
  const auto started = std::chrono::steady_clock::now();
  {
    TableWatch watch({"default:a"}, hourly(), master, observer);
    watch.start();
    ASSERT_TRUE(eventually([&] { return master.checks("default:a") == 1; }));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
}

TEST(TableWatch, StopDoesNotWaitForACheckInProgress) {
  // The daemon calls stop() when it starts shutting down: a check hanging on a silent gateway must
  // end alongside the rest of the shutdown, not add its read timeout after it.
  FakeMaster master;
  RecordingObserver observer;
  master.set_delay(500ms);
  TableWatch watch({"default:a", "default:b"}, hourly(), master, observer);
  watch.start();
  ASSERT_TRUE(eventually([&] { return master.checks_started() == 1; }));
  const auto asked = std::chrono::steady_clock::now();
  watch.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 100ms);
  // The round in progress ends with the call it is in: the second table is not asked.
  std::this_thread::sleep_for(700ms);
  EXPECT_EQ(master.checks_started(), 1);
}

TEST(TableWatchAtRunTime, ATableAddedIsHeldUntilItsFirstCheckWhichRunsAtOnce) {
  FakeMaster master;
  RecordingObserver observer;
  TableWatch watch({"default:a"}, hourly(), master, observer);
  watch.start();
  ASSERT_TRUE(eventually([&] { return master.checks("default:a") == 1; }));
  // Not checked before: no put may go to a table not known to exist (under create_table it may not yet).
  master.set_delay(200ms);
  watch.watch({"default:new", {"d", "meta"}, {}});
  EXPECT_FALSE(watch.writable("default:new"));
  EXPECT_TRUE(eventually([&] { return watch.writable("default:new"); })) << "checked now, not an hour later";
  EXPECT_EQ(master.checks("default:new"), 1);
  EXPECT_EQ(master.checks("default:a"), 1) << "only the new table is checked; the others keep their schedule";
  EXPECT_EQ(master.families_asked().back(), "d,meta");
  EXPECT_EQ(observer.reports(), (Reports{{"default:a", true}, {"default:new", true}}));
}

TEST(TableWatchAtRunTime, WithoutCreateAMissingOneIsReportedAndHeldAndNeverCreated) {
  FakeMaster master;
  RecordingObserver observer;
  TableWatch watch({}, hourly(), master, observer);
  master.set("ns1:orders_eu", TableStatus::missing);
  watch.watch({"ns1:orders_eu", {}, {}});
  watch.check();
  EXPECT_FALSE(watch.writable("ns1:orders_eu"));
  EXPECT_EQ(watch.problems(), (std::vector<std::string>{"HBase table ns1:orders_eu does not exist"}));
  EXPECT_EQ(observer.reports(), (Reports{{"ns1:orders_eu", false}}));
  EXPECT_EQ(master.families_asked(), (std::vector<std::string>{"d"})) << "no families of its own: the options'";
  EXPECT_TRUE(master.created().empty());
  // Created by someone else: released at a later check.
  master.set("ns1:orders_eu", TableStatus::writable);
  watch.check();
  EXPECT_TRUE(watch.writable("ns1:orders_eu"));
}

TableWatchOptions creating() {
  auto options = hourly();
  TableSettings settings;
  settings.ttl = 900s;
  settings.bloom_filter = "ROWCOL";
  settings.compression = "GZ";
  options.create = settings;
  return options;
}

TEST(TableWatchAtRunTime, UnderCreateAMissingOneIsCreatedWithItsFamiliesSettingsAndSplits) {
  FakeMaster master;
  RecordingObserver observer;
  TableWatch watch({}, creating(), master, observer);
  master.set("ns1:orders_eu", TableStatus::missing);
  watch.watch({"ns1:orders_eu", {"d", "meta"}, {"1", "2"}});
  watch.check();
  ASSERT_EQ(master.created().size(), 1u);
  const auto spec = master.created()[0];
  EXPECT_EQ(spec.ns, "ns1");
  EXPECT_EQ(spec.table, "orders_eu");
  EXPECT_EQ(spec.split_keys, (std::vector<std::string>{"1", "2"}));
  ASSERT_EQ(spec.families.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(spec.families[i].name, i == 0 ? "d" : "meta");
    EXPECT_EQ(spec.families[i].ttl, 900s);
    EXPECT_EQ(spec.families[i].max_versions, 1);
    EXPECT_EQ(spec.families[i].bloom_filter, "ROWCOL");
    EXPECT_EQ(spec.families[i].compression, "GZ");
  }
  EXPECT_TRUE(watch.writable("ns1:orders_eu"));
  EXPECT_TRUE(watch.problems().empty());
  EXPECT_EQ(observer.reports(), (Reports{{"ns1:orders_eu", true}})) << "the verdict is the check after creating";
}

TEST(TableWatchAtRunTime, ACreationRefusedIsHeldReportedAndTriedAgain) {
  FakeMaster master;
  RecordingObserver observer;
  TableWatch watch({}, creating(), master, observer);
  master.set("default:new", TableStatus::missing);
  master.set_create_fails(true);
  watch.watch({"default:new", {}, {}});
  watch.check();
  EXPECT_FALSE(watch.writable("default:new"));
  EXPECT_EQ(watch.problems(), (std::vector<std::string>{"HBase table default:new does not exist"}));
  master.set_create_fails(false);
  watch.check();
  EXPECT_EQ(master.created().size(), 2u);
  EXPECT_TRUE(watch.writable("default:new"));
  EXPECT_EQ(observer.reports(), (Reports{{"default:new", false}, {"default:new", true}}));
}

TEST(TableWatchAtRunTime, ATableThatExistedOnceIsNeverRecreated) {
  // Dropped while running: someone dropped it (perhaps to re-create it with other splits); a daemon
  // racing them would re-create the old one. Tables known at start are bootstrap's, never the watch's.
  FakeMaster master;
  RecordingObserver observer;
  TableWatch watch({"default:start"}, creating(), master, observer);
  watch.watch({"default:new", {}, {}});
  watch.check();
  master.set("default:new", TableStatus::missing);
  master.set("default:start", TableStatus::missing);
  watch.check();
  watch.check();
  EXPECT_TRUE(master.created().empty());
  EXPECT_FALSE(watch.writable("default:new"));
  EXPECT_FALSE(watch.writable("default:start"));
}

TEST(TableWatchAtRunTime, AFirstCheckHBaseCannotAnswerReleasesTheWrites) {
  // As for any table never checked: held forever by a gateway user without ADMIN permission would
  // stop the route; the writers' own errors tell instead.
  FakeMaster master;
  RecordingObserver observer;
  TableWatch watch({}, creating(), master, observer);
  master.set_unreachable(true);
  watch.watch({"default:new", {}, {}});
  EXPECT_FALSE(watch.writable("default:new"));
  watch.check();
  EXPECT_TRUE(watch.writable("default:new"));
  EXPECT_TRUE(master.created().empty()) << "only a table known to be missing is created";
  EXPECT_TRUE(observer.reports().empty());
}

TEST(TableWatchAtRunTime, WatchingAgainAddsTheOtherRoutesFamiliesWithoutHoldingTheTable) {
  FakeMaster master;
  RecordingObserver observer;
  TableWatch watch({"default:a"}, hourly(), master, observer);
  watch.check();
  watch.watch({"default:a", {"d"}, {}});
  watch.watch({"default:a", {"meta"}, {}});
  EXPECT_TRUE(watch.writable("default:a")) << "already checked: writes go on while the new family is checked";
  master.set_missing("default:a", {"meta"});
  watch.check();
  EXPECT_EQ(master.families_asked().back(), "d,meta");
  EXPECT_EQ(watch.problems(), (std::vector<std::string>{"HBase table default:a has no column family 'meta'"}));
}

TEST(TableWatchAtRunTime, GrowsWhileWritersAskAndNoMissingTableIsEverSeenWritable) {
  // Run under TSan (scripts/tsan.sh): the pipeline thread adds tables while writer threads look
  // them up and the watch's thread checks them. Every other table is missing: once added, a writer
  // must never see it writable (held until its first check, then by its verdict).
  constexpr int kTables = 200;
  FakeMaster master;
  RecordingObserver observer;
  std::vector<std::string> names;
  for (int i = 0; i < kTables; ++i) {
    names.push_back("default:t" + std::to_string(i));
    if (i % 2 == 1) master.set(names.back(), TableStatus::missing);
  }
  TableWatch watch({}, hourly(), master, observer);
  watch.start();
  std::atomic<int> added{0};
  std::atomic<bool> done{false};
  std::atomic<int> missing_seen_writable{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (unsigned i = static_cast<unsigned>(w); !done.load(); i = i * 1103515245u + 12345u) {
        const int known = added.load();
        if (known == 0) continue;
        const int table = static_cast<int>(i % static_cast<unsigned>(known));
        if (table % 2 == 1 && watch.writable(names[static_cast<std::size_t>(table)])) ++missing_seen_writable;
        if (i % 64 == 0) (void)watch.problems();
      }
    });
  }
  for (int i = 0; i < kTables; ++i) {
    watch.watch({names[static_cast<std::size_t>(i)], {}, {}});
    added.store(i + 1);
    if (i % 16 == 0) std::this_thread::sleep_for(1ms);
  }
  EXPECT_TRUE(eventually([&] { return watch.problems().size() == kTables / 2; }));
  done = true;
  for (auto& writer : writers) writer.join();
  EXPECT_EQ(missing_seen_writable.load(), 0);
  for (int i = 0; i < kTables; ++i) {
    EXPECT_EQ(watch.writable(names[static_cast<std::size_t>(i)]), i % 2 == 0) << names[static_cast<std::size_t>(i)];
  }
  EXPECT_EQ(observer.reports().size(), static_cast<std::size_t>(kTables)) << "each reported once";
}

TEST(Readiness, NotReadyWhileARouteTableIsUnavailableAndTheReasonNamesIt) {
  FakeMaster master;
  RecordingObserver observer;
  TableWatch watch({"default:a"}, hourly(), master, observer);
  PipelineStats stats;
  stats.assignment_received = true;
  WriterPool writers({}, {}, RetryPolicy{}, observer);
  watch.check();
  EXPECT_TRUE(not_ready_reasons(stats, writers, &watch).empty());
  master.set("default:a", TableStatus::disabled);
  watch.check();
  EXPECT_EQ(not_ready_reasons(stats, writers, &watch), (std::vector<std::string>{"HBase table default:a is disabled"}));
}

}  // namespace
}  // namespace hbingest::ingest
