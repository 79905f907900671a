// `bootstrap` against a real HBase Thrift2 server (HBINGEST_THRIFT2): each table gets the families
// its routes write to, alike (TTL, VERSIONS 1, bloom filter), and a second run finds them matching.
// And the table watch with a table a template made at run time: created under table.create_table,
// reported and held otherwise.

#include "hbingest/ingest/table_bootstrap.h"
#include "hbingest/ingest/table_watch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace hbingest::ingest {
namespace {

using namespace std::chrono_literals;

connectors::Thrift2Options options_from_env() {
  const char* endpoint = std::getenv("HBINGEST_THRIFT2");
  if (endpoint == nullptr) throw std::runtime_error("HBINGEST_THRIFT2 is not set: run through scripts/test.sh");
  connectors::Thrift2Options options;
  options.endpoints = {endpoint};
  options.read_timeout = 30s;
  return options;
}

std::vector<std::string> family_names(connectors::HBaseAdmin& admin, const std::string& table) {
  std::vector<std::string> names;
  for (const auto& family : admin.describe_families("default", table)) {
    EXPECT_EQ(family.ttl_seconds, 900) << table << " " << family.name;
    EXPECT_EQ(family.max_versions, 1) << table << " " << family.name;
    EXPECT_EQ(family.bloom_filter, "ROWCOL") << table << " " << family.name;
    names.push_back(family.name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(TableBootstrap, EachTableGetsTheUnionOfItsRoutesFamiliesAndASecondRunFindsThemMatching) {
  std::random_device random;
  const std::string suffix = std::to_string(random() % 1000000000);
  const std::string shared = "it_boot_shared_" + suffix;
  const std::string plain = "it_boot_plain_" + suffix;
  connectors::HBaseAdmin admin(options_from_env());
  TableSettings settings;
  settings.families = {"d"};
  settings.ttl = 900s;
  settings.bloom_filter = "ROWCOL";
  const std::vector<TablePlan> plans = {
      {"default:" + shared, {"d", "meta"}, {"5"}},
      {"default:" + plain, {}, {}},  // no families of its own: the settings'
      {"default:" + shared, {"meta", "audit"}, {}},
  };
  const auto first = bootstrap_tables(admin, plans, settings);
  EXPECT_FALSE(first.differences);
  ASSERT_EQ(first.lines.size(), 2u);
  EXPECT_EQ(first.lines[0], "created default:" + shared + " (families 'd', 'meta', 'audit', TTL 900 s, 2 regions)");
  EXPECT_EQ(first.lines[1], "created default:" + plain + " (family 'd', TTL 900 s, 1 regions)");
  EXPECT_EQ(family_names(admin, shared), (std::vector<std::string>{"audit", "d", "meta"}));
  EXPECT_EQ(family_names(admin, plain), (std::vector<std::string>{"d"}));

  const auto second = bootstrap_tables(admin, plans, settings);
  EXPECT_FALSE(second.differences);
  EXPECT_EQ(second.lines, (std::vector<std::string>{"ok default:" + shared + " (exists and matches)",
                                                    "ok default:" + plain + " (exists and matches)"}));
  // A route that starts writing another family: reported, the table left alone.
  const auto third = bootstrap_tables(admin, {{"default:" + plain, {"d", "extra"}, {}}}, settings);
  EXPECT_TRUE(third.differences);
  ASSERT_EQ(third.lines.size(), 1u);
  EXPECT_NE(third.lines[0].find("has no column family 'extra'"), std::string::npos) << third.lines[0];
  EXPECT_EQ(family_names(admin, plain), (std::vector<std::string>{"d"}));

  admin.delete_table("default", shared);
  admin.delete_table("default", plain);
}

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

TEST(TableWatchAtRunTime, AMissingTableATemplateMadeIsCreatedUnderCreateTableAndReportedOtherwise) {
  std::random_device random;
  const std::string suffix = std::to_string(random() % 1000000000);
  const std::string created = "it_watch_created_" + suffix;
  const std::string reported = "it_watch_reported_" + suffix;
  connectors::HBaseAdmin admin(options_from_env());
  connectors::HBaseAdmin watch_admin(options_from_env());
  RecordingObserver observer;

  TableWatchOptions options;
  options.families = {"d"};
  TableSettings settings;
  settings.ttl = 900s;
  settings.bloom_filter = "ROWCOL";
  options.create = settings;
  {
    TableWatch watch({}, options, watch_admin, observer);
    watch.watch({"default:" + created, {"d", "meta"}, {"5"}});
    EXPECT_FALSE(watch.writable("default:" + created)) << "held until its first check";
    watch.check();
    EXPECT_TRUE(watch.writable("default:" + created));
    EXPECT_TRUE(watch.problems().empty());
  }
  ASSERT_TRUE(admin.table_exists("default", created));
  EXPECT_EQ(family_names(admin, created), (std::vector<std::string>{"d", "meta"}));

  options.create.reset();
  {
    TableWatch watch({}, options, watch_admin, observer);
    watch.watch({"default:" + reported, {}, {}});
    watch.check();
    EXPECT_FALSE(watch.writable("default:" + reported));
    EXPECT_EQ(watch.problems(), (std::vector<std::string>{"HBase table default:" + reported + " does not exist"}));
  }
  EXPECT_FALSE(admin.table_exists("default", reported));
  EXPECT_EQ(observer.reports(),
            (std::vector<std::pair<std::string, bool>>{{"default:" + created, true}, {"default:" + reported, false}}));
  admin.delete_table("default", created);
}

}  // namespace
}  // namespace hbingest::ingest
