// A packed cell (`from: kafka:value`) reads back through the query API as the field layout would.

#include "packed_cell_reader.h"

#include <gtest/gtest.h>

#include "hbingest/server/row_json.h"

namespace hbingest::app {
namespace {

query::ResultRow row_with(std::vector<connectors::ScannedCell> cells) {
  query::ResultRow row;
  row.key = "k";
  row.cells = std::move(cells);
  return row;
}

TEST(PackedCells, APackedJsonValueAnswersAsItsFields) {
  const PackedValueReader reader("d", "raw", config::EventFormat::json, nullptr, {});
  const std::string value = R"({"event_id":"order","amount":12.5,"items":[1,2],"note":null})";
  const auto packed = server::row_to_json(row_with({{"d", "raw", value, 7}}), nullptr, &reader);
  // What the default mapping writes of the same event.
  const auto fields = server::row_to_json(
      row_with({{"d", "event_id", "order", 7}, {"d", "amount", "12.5", 7}, {"d", "items", "[1,2]", 7}}));
  EXPECT_EQ(packed["columns"], fields["columns"]);
  EXPECT_FALSE(packed.contains("packed_error"));
}

TEST(PackedCells, BytesThatDoNotDecodeAreAnsweredAsStoredWithWhy) {
  const PackedValueReader reader("d", "raw", config::EventFormat::json, nullptr, {});
  const auto row =
      server::row_to_json(row_with({{"d", "raw", "not json", 7}, {"d", "other", "x", 7}}), nullptr, &reader);
  EXPECT_EQ(row["columns"]["d:raw"], "not json");
  EXPECT_EQ(row["columns"]["d:other"], "x");
  EXPECT_NE(row["packed_error"].get<std::string>().find("invalid_json"), std::string::npos) << row.dump();
}

}  // namespace
}  // namespace hbingest::app
