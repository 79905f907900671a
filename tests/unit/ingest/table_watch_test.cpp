// TableWatch over a fake HBase master: which verdicts it reaches, what it reports (once per
// change), what it leaves alone when HBase cannot answer, and when its thread checks.

#include "hbingest/ingest/table_watch.h"

#include <gtest/gtest.h>

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
