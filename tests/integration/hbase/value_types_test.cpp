// Typed cell values on the real stack: cells of every type and edge value, written by our encoder
// (routing::append_value) through the Thrift2 RowSink, read back by an independent Java reader
// (stack/hbstack cells: HBase's Java client and Bytes.toLong, toDouble, toBigDecimal, ...) and
// by our own render_value over a Thrift2 scan. Both must give the value the cell was meant to hold.
// Needs HBINGEST_THRIFT2 and HBSTACK_DIR (stack/hbstack env) and a JDK.

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "hbingest/connectors/hbase_admin.h"
#include "hbingest/connectors/thrift2_scanner_factory.h"
#include "hbingest/connectors/thrift2_sink.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/routing/value_type.h"

namespace hbingest::routing {
namespace {

using connectors::Cell;
using connectors::RowMutation;
using keyspec::FieldValue;
using nlohmann::json;
using namespace std::chrono_literals;

struct Case {
  std::string qualifier;
  ValueType type;
  FieldValue value;
  json meant;  // the value the cell holds, as render_value answers it
};

// Every type with its edge values. A double or float is meant bit for bit (value_hex checks the
// bits; `meant` says what both readers must print).
std::vector<Case> cases() {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  return {
      {"long_min", ValueType::int64, std::numeric_limits<std::int64_t>::min(),
       std::numeric_limits<std::int64_t>::min()},
      {"long_max", ValueType::int64, std::numeric_limits<std::int64_t>::max(),
       std::numeric_limits<std::int64_t>::max()},
      {"long_neg", ValueType::int64, std::int64_t{-1}, -1},
      {"long_from_double", ValueType::int64, 1e3, 1000},
      {"int_min", ValueType::int32, std::int64_t{-2147483648}, -2147483648},
      {"int_neg", ValueType::int32, std::int64_t{-2}, -2},
      {"short_min", ValueType::int16, std::int64_t{-32768}, -32768},
      {"short_max", ValueType::int16, std::int64_t{32767}, 32767},
      {"double_tenth", ValueType::float64, 0.1, 0.1},
      {"double_neg_zero", ValueType::float64, -0.0, -0.0},
      {"double_subnormal", ValueType::float64, 5e-324, 5e-324},
      {"double_max", ValueType::float64, std::numeric_limits<double>::max(), std::numeric_limits<double>::max()},
      {"double_nan", ValueType::float64, std::nan(""), "NaN"},
      {"double_neg_inf", ValueType::float64, -kInf, "-Infinity"},
      {"double_from_long", ValueType::float64, std::int64_t{9007199254740993}, 9007199254740992.0},
      {"float_tenth", ValueType::float32, 0.1, 0.1},
      {"float_subnormal", ValueType::float32, 1.401298464324817e-45, 1e-45},
      {"float_max", ValueType::float32, 3.4028234663852886e38, 3.4028235e38},
      {"float_inf", ValueType::float32, kInf, "Infinity"},
      {"bool_true", ValueType::boolean, true, true},
      {"bool_false", ValueType::boolean, false, false},
      {"dec_text", ValueType::bigdecimal, std::string_view("-12.30"), "-12.30"},
      {"dec_zero_scale2", ValueType::bigdecimal, std::string_view("0.00"), "0.00"},
      {"dec_exponent", ValueType::bigdecimal, std::string_view("1.5E+3"), "1.5E+3"},
      {"dec_small", ValueType::bigdecimal, std::string_view("0.0000001"), "1E-7"},
      {"dec_huge", ValueType::bigdecimal, std::string_view("-123456789012345678901234567890.123456789"),
       "-123456789012345678901234567890.123456789"},
      {"dec_scale_max", ValueType::bigdecimal, std::string_view("1E+2147483647"), "1E+2147483647"},
      {"dec_double", ValueType::bigdecimal, 12.5, "12.5"},
      {"dec_long_min", ValueType::bigdecimal, std::numeric_limits<std::int64_t>::min(), "-9223372036854775808"},
      {"string_unicode", ValueType::string, std::string_view("h\xc3\xa9llo \xf0\x9f\x98\x80 \"q\" \\ \t\n"),
       "h\xc3\xa9llo \xf0\x9f\x98\x80 \"q\" \\ \t\n"},
      {"string_empty", ValueType::string, std::string_view(""), ""},
      {"bytes", ValueType::bytes, std::string_view("\x00\xff\x80", 3), "AP+A"},
  };
}

std::string hbstack_command(const std::string& table, const std::vector<Case>& all) {
  std::string command = std::string(HBINGEST_SOURCE_DIR) + "/stack/hbstack cells " + table;
  for (const auto& c : all) command += " d:" + c.qualifier + "=" + std::string(value_type_name(c.type));
  return command;
}

// The Java reader's JSON lines, by qualifier; its status line must say ok.
std::map<std::string, json> java_cells(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::string output;
  std::array<char, 4096> buffer{};
  for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe.get())) > 0;)
    output.append(buffer.data(), n);
  std::map<std::string, json> cells;
  json status;
  for (std::size_t at = 0; at < output.size();) {
    const auto end = output.find('\n', at);
    const auto line = json::parse(output.substr(at, end - at));
    at = end == std::string::npos ? output.size() : end + 1;
    if (line.contains("ok")) {
      status = line;
    } else {
      cells[line.at("qualifier").get<std::string>()] = line;
    }
  }
  if (status.value("ok", false) != true) throw std::runtime_error("hbstack cells failed: " + output);
  return cells;
}

// Whether Java's printed value (Double.toString, Float.toString, a JSON number or string) is the
// value meant. A float is read back at float precision: Float.toString prints just enough digits.
bool java_agrees(ValueType type, const json& java, const json& meant) {
  if (meant.is_string() || !meant.is_number_float()) return java == meant;
  if (!java.is_number()) return false;
  if (type == ValueType::float32) {
    return std::bit_cast<std::uint32_t>(static_cast<float>(java.get<double>())) ==
           std::bit_cast<std::uint32_t>(static_cast<float>(meant.get<double>()));
  }
  return std::bit_cast<std::uint64_t>(java.get<double>()) == std::bit_cast<std::uint64_t>(meant.get<double>());
}

TEST(ValueTypesIntegrationTest, JavasBytesReadersAndOurRenderAgreeOnEveryCellWeWrite) {
  const char* endpoint = std::getenv("HBINGEST_THRIFT2");
  ASSERT_NE(endpoint, nullptr) << "HBINGEST_THRIFT2 is not set: run through scripts/test.sh";
  ASSERT_NE(std::getenv("HBSTACK_DIR"), nullptr) << "HBSTACK_DIR is not set: eval \"$(stack/hbstack env)\"";
  connectors::Thrift2Options options;
  options.endpoints = {endpoint};
  options.read_timeout = 30s;
  connectors::HBaseAdmin admin(options);
  const std::string table = "it_values_" + std::to_string(std::random_device{}() % 1000000000);
  connectors::TableSpec spec;
  spec.table = table;
  ASSERT_EQ(admin.ensure_table(spec).outcome, connectors::EnsureOutcome::created);
  // Dropped however the test ends.
  const std::unique_ptr<connectors::HBaseAdmin, std::function<void(connectors::HBaseAdmin*)>> drop(
      &admin, [&table](connectors::HBaseAdmin* a) { a->delete_table("default", table); });

  const auto all = cases();
  // Now: the family's TTL (600 s) would hide a cell of an older timestamp at once.
  const auto now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  RowMutation row{"\x01values", {}, now_ms, std::nullopt};
  std::map<std::string, std::string> written;
  for (const auto& c : all) {
    std::string bytes;
    const auto problem = append_value(c.value, c.type, bytes);
    ASSERT_FALSE(problem.has_value()) << c.qualifier << ": " << *problem;
    written[c.qualifier] = bytes;
    row.cells.push_back(Cell{"d", c.qualifier, std::move(bytes)});
  }
  auto sink = connectors::make_thrift2_sink(options);
  ASSERT_TRUE(sink->write(table, std::span(&row, 1), {}).empty());

  // Our reading of the stored bytes (a scan, not what we meant to send).
  std::map<std::string, std::string> stored;
  const auto factory = connectors::make_thrift2_scanner_factory(options, 1);  // outlives its scanner
  auto scanner = factory->open({table, "", "", {}, 10, false});
  for (auto chunk = scanner->next_chunk(); !chunk.empty(); chunk = scanner->next_chunk()) {
    for (const auto& r : chunk) {
      for (const auto& cell : r.cells) stored[cell.qualifier] = cell.value;
    }
  }
  const auto java = java_cells(hbstack_command(table, all));
  ASSERT_EQ(java.size(), all.size());
  for (const auto& c : all) {
    SCOPED_TRACE(c.qualifier);
    ASSERT_TRUE(java.contains(c.qualifier));
    const auto& line = java.at(c.qualifier);
    EXPECT_EQ(line.at("row"), keyspec::to_hex(row.row));
    EXPECT_EQ(line.at("timestamp"), row.timestamp_ms);
    EXPECT_EQ(line.at("value_hex"), keyspec::to_hex(written.at(c.qualifier)));
    ASSERT_TRUE(line.contains("value")) << line.dump();
    EXPECT_TRUE(java_agrees(c.type, line.at("value"), c.meant))
        << "Java read " << line.at("value").dump() << ", meant " << c.meant.dump();
    json ours;
    ASSERT_TRUE(stored.contains(c.qualifier));
    const auto problem = render_value(stored.at(c.qualifier), c.type, ours);
    ASSERT_FALSE(problem.has_value()) << *problem;
    EXPECT_TRUE(java_agrees(c.type, ours, c.meant)) << "we render " << ours.dump() << ", meant " << c.meant.dump();
  }
}

}  // namespace
}  // namespace hbingest::routing
