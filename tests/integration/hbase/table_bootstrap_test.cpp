// `bootstrap` against a real HBase Thrift2 server (HBINGEST_THRIFT2): each table gets the families
// its routes write to, alike (TTL, VERSIONS 1, bloom filter), and a second run finds them matching.

#include "hbingest/ingest/table_bootstrap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>

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

}  // namespace
}  // namespace hbingest::ingest
