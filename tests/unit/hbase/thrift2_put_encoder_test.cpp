// Thrift2PutEncoder writes putMultiple calls itself instead of through the generated client: its
// bytes must be the generated client's, byte for byte, for every shape of row and both protocols.
// The reference here is THBaseServiceClient::send_putMultiple over TPut objects built from the
// same rows, the way the sink built them before the encoder existed.

#include "hbingest/connectors/thrift2_put_encoder.h"

#include <gtest/gtest.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <algorithm>
#include <string>
#include <vector>

#include "THBaseService.h"

namespace hbingest::connectors {
namespace {

namespace gen = thrift2::gen;
using apache::thrift::transport::TMemoryBuffer;

std::string ttl_bytes(std::int64_t ttl_ms) {
  std::string bytes(8, '\0');
  auto value = static_cast<std::uint64_t>(ttl_ms);
  for (int i = 7; i >= 0; --i) {
    bytes[static_cast<std::size_t>(i)] = static_cast<char>(value & 0xffU);
    value >>= 8;
  }
  return bytes;
}

std::vector<gen::TPut> to_tputs(const std::vector<RowMutation>& rows, Durability durability) {
  std::vector<gen::TPut> puts;
  for (const auto& row : rows) {
    gen::TPut put;
    put.row = row.row;
    for (const auto& cell : row.cells) {
      gen::TColumnValue value;
      value.family = cell.family;
      value.qualifier = cell.qualifier;
      value.value = cell.value;
      put.columnValues.push_back(value);
    }
    put.__set_timestamp(row.timestamp_ms);
    if (row.ttl_ms) put.__set_attributes({{"_ttl", ttl_bytes(*row.ttl_ms)}});
    if (durability != Durability::use_default) {
      put.__set_durability(static_cast<gen::TDurability::type>(static_cast<int>(durability)));
    }
    puts.push_back(std::move(put));
  }
  return puts;
}

std::string generated_call(ThriftProtocolKind kind, const std::string& table, const std::vector<RowMutation>& rows,
                           Durability durability) {
  auto buffer = std::make_shared<TMemoryBuffer>();
  std::shared_ptr<apache::thrift::protocol::TProtocol> protocol;
  if (kind == ThriftProtocolKind::binary) {
    protocol = std::make_shared<apache::thrift::protocol::TBinaryProtocol>(buffer);
  } else {
    protocol = std::make_shared<apache::thrift::protocol::TCompactProtocol>(buffer);
  }
  gen::THBaseServiceClient client(protocol);
  client.send_putMultiple(table, to_tputs(rows, durability));
  return buffer->getBufferAsString();
}

std::string encoded_call(Thrift2PutEncoder& encoder, const std::string& table, const std::vector<RowMutation>& rows,
                         Durability durability) {
  const auto bytes = encoder.encode(table, rows, durability);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// Names the first differing byte instead of printing megabytes of call.
testing::AssertionResult same_bytes(const std::string& encoded, const std::string& generated) {
  if (encoded == generated) return testing::AssertionSuccess();
  const auto [at, unused] = std::mismatch(encoded.begin(), encoded.end(), generated.begin(), generated.end());
  return testing::AssertionFailure() << "encoded " << encoded.size() << " bytes, generated " << generated.size()
                                     << "; first difference at byte " << (at - encoded.begin());
}

// Every byte value, NULs included: row keys and values are binary.
std::string all_bytes() {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  return bytes;
}

std::vector<RowMutation> varied_rows() {
  std::vector<RowMutation> rows;
  rows.push_back(
      {"\x03login\x00\x01", {{"d", "event_id", "login"}, {"d", "ts", "1790000000000"}}, 1790000000000, 600000});
  rows.push_back({all_bytes(), {{"d", all_bytes(), all_bytes()}}, 0, std::nullopt});  // no TTL attribute
  rows.push_back({"no-cells", {}, 1, 1});
  rows.push_back({"", {{"", "", ""}}, -1, -1});  // empty strings; negative numbers as they come
  rows.push_back({"big", {{"raw", "value", std::string(300 * 1024, 'x')}}, INT64_MAX, INT64_MAX});  // > the buffer
  RowMutation wide{"wide", {}, 1790000000001, 42};
  for (int i = 0; i < 300; ++i) wide.cells.push_back({"d", "f" + std::to_string(i), std::to_string(i * 7)});
  rows.push_back(wide);
  return rows;
}

class Thrift2PutEncoderTest : public testing::TestWithParam<ThriftProtocolKind> {};

TEST_P(Thrift2PutEncoderTest, WritesTheGeneratedClientsBytesForEveryDurability) {
  Thrift2PutEncoder encoder(GetParam());
  const auto rows = varied_rows();
  for (const auto durability : {Durability::use_default, Durability::skip_wal, Durability::async_wal,
                                Durability::sync_wal, Durability::fsync_wal}) {
    SCOPED_TRACE(static_cast<int>(durability));
    EXPECT_TRUE(same_bytes(encoded_call(encoder, "ns:events", rows, durability),
                           generated_call(GetParam(), "ns:events", rows, durability)));
  }
}

TEST_P(Thrift2PutEncoderTest, EachRowAloneAndNoRowAtAll) {
  Thrift2PutEncoder encoder(GetParam());
  for (const auto& row : varied_rows()) {
    const std::vector<RowMutation> one{row};
    EXPECT_TRUE(same_bytes(encoded_call(encoder, "t", one, Durability::use_default),
                           generated_call(GetParam(), "t", one, Durability::use_default)));
  }
  EXPECT_TRUE(same_bytes(encoded_call(encoder, "t", {}, Durability::use_default),
                         generated_call(GetParam(), "t", {}, Durability::use_default)));
}

TEST_P(Thrift2PutEncoderTest, AReusedEncoderKeepsNothingOfTheCallBefore) {
  Thrift2PutEncoder encoder(GetParam());
  const auto big = varied_rows();
  const std::vector<RowMutation> small{{"r", {{"d", "q", "v"}}, 5, std::nullopt}};
  (void)encoder.encode("t", big, Durability::sync_wal);
  EXPECT_TRUE(same_bytes(encoded_call(encoder, "t", small, Durability::use_default),
                         generated_call(GetParam(), "t", small, Durability::use_default)));
  // A call past the size the encoder keeps between calls (8 MiB), then a small one again.
  const std::vector<RowMutation> huge{{"h", {{"d", "q", std::string(9 * 1024 * 1024, 'h')}}, 5, 7}};
  EXPECT_TRUE(same_bytes(encoded_call(encoder, "t", huge, Durability::use_default),
                         generated_call(GetParam(), "t", huge, Durability::use_default)));
  EXPECT_TRUE(same_bytes(encoded_call(encoder, "t", small, Durability::use_default),
                         generated_call(GetParam(), "t", small, Durability::use_default)));
}

// The reference for deletes: TDelete objects as a caller of the generated client would build
// them for HBase's Delete(row, ts) and Delete.addColumns(family, qualifier, ts).
std::vector<gen::TDelete> to_tdeletes(const std::vector<RowMutation>& rows, Durability durability) {
  std::vector<gen::TDelete> deletes;
  for (const auto& row : rows) {
    gen::TDelete del;
    del.row = row.row;
    if (row.kind == MutationKind::put) {
      std::vector<gen::TColumn> columns;
      for (const auto& column : row.deleted_columns) {
        gen::TColumn tcolumn;
        tcolumn.family = column.family;
        tcolumn.__set_qualifier(column.qualifier);
        tcolumn.__set_timestamp(row.timestamp_ms);
        columns.push_back(tcolumn);
      }
      del.__set_columns(columns);
    }
    del.__set_timestamp(row.timestamp_ms);
    del.__set_deleteType(gen::TDeleteType::DELETE_COLUMNS);
    if (durability != Durability::use_default) {
      del.__set_durability(static_cast<gen::TDurability::type>(static_cast<int>(durability)));
    }
    deletes.push_back(std::move(del));
  }
  return deletes;
}

std::string generated_delete_call(ThriftProtocolKind kind, const std::string& table,
                                  const std::vector<RowMutation>& rows, Durability durability) {
  auto buffer = std::make_shared<TMemoryBuffer>();
  std::shared_ptr<apache::thrift::protocol::TProtocol> protocol;
  if (kind == ThriftProtocolKind::binary) {
    protocol = std::make_shared<apache::thrift::protocol::TBinaryProtocol>(buffer);
  } else {
    protocol = std::make_shared<apache::thrift::protocol::TCompactProtocol>(buffer);
  }
  gen::THBaseServiceClient client(protocol);
  client.send_deleteMultiple(table, to_tdeletes(rows, durability));
  return buffer->getBufferAsString();
}

std::string encoded_delete_call(Thrift2PutEncoder& encoder, const std::string& table,
                                const std::vector<RowMutation>& rows, Durability durability) {
  const auto bytes = encoder.encode_deletes(table, rows, durability);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

RowMutation delete_row(std::string row, std::int64_t ts) {
  RowMutation mutation{std::move(row), {}, ts, std::nullopt};
  mutation.kind = MutationKind::delete_row;
  return mutation;
}

std::vector<RowMutation> varied_deletes() {
  std::vector<RowMutation> rows;
  rows.push_back(delete_row("\x03order\x00\x01", 1790000000000));
  rows.push_back(delete_row(all_bytes(), 0));
  rows.push_back(delete_row("", -1));
  rows.push_back(delete_row("max", INT64_MAX));
  // A put's null fields under delete_cell: its cells are not part of a deleteMultiple.
  RowMutation columns{"cells", {{"d", "kept", "v"}}, 1790000000001, 600000};
  columns.deleted_columns = {{"d", "gone"}, {all_bytes(), all_bytes()}, {"", ""}};
  rows.push_back(columns);
  RowMutation wide{"wide", {}, 5, std::nullopt};
  for (int i = 0; i < 300; ++i) wide.deleted_columns.push_back({"d", "f" + std::to_string(i)});
  rows.push_back(wide);
  RowMutation big{"big", {}, 7, std::nullopt};
  big.deleted_columns = {{"raw", std::string(300 * 1024, 'q')}};  // > the buffer
  rows.push_back(big);
  return rows;
}

TEST_P(Thrift2PutEncoderTest, DeletesAreTheGeneratedClientsBytesForEveryDurability) {
  Thrift2PutEncoder encoder(GetParam());
  const auto rows = varied_deletes();
  for (const auto durability : {Durability::use_default, Durability::skip_wal, Durability::async_wal,
                                Durability::sync_wal, Durability::fsync_wal}) {
    SCOPED_TRACE(static_cast<int>(durability));
    EXPECT_TRUE(same_bytes(encoded_delete_call(encoder, "ns:events", rows, durability),
                           generated_delete_call(GetParam(), "ns:events", rows, durability)));
  }
  for (const auto& row : rows) {
    const std::vector<RowMutation> one{row};
    EXPECT_TRUE(same_bytes(encoded_delete_call(encoder, "t", one, Durability::use_default),
                           generated_delete_call(GetParam(), "t", one, Durability::use_default)));
  }
  EXPECT_TRUE(same_bytes(encoded_delete_call(encoder, "t", {}, Durability::use_default),
                         generated_delete_call(GetParam(), "t", {}, Durability::use_default)));
}

TEST_P(Thrift2PutEncoderTest, PutsAndDeletesShareTheBufferWithoutLeftovers) {
  Thrift2PutEncoder encoder(GetParam());
  const auto puts = varied_rows();
  const auto deletes = varied_deletes();
  (void)encoder.encode_deletes("t", deletes, Durability::sync_wal);
  EXPECT_TRUE(same_bytes(encoded_call(encoder, "t", puts, Durability::use_default),
                         generated_call(GetParam(), "t", puts, Durability::use_default)));
  EXPECT_TRUE(same_bytes(encoded_delete_call(encoder, "t", deletes, Durability::use_default),
                         generated_delete_call(GetParam(), "t", deletes, Durability::use_default)));
}

TEST_P(Thrift2PutEncoderTest, AMutationOfTheWrongKindForTheCallIsABugNotBytes) {
  Thrift2PutEncoder encoder(GetParam());
  const std::vector<RowMutation> a_delete{delete_row("r", 1)};
  EXPECT_THROW((void)encoder.encode("t", a_delete, Durability::use_default), std::logic_error);
  const std::vector<RowMutation> a_plain_put{{"r", {{"d", "q", "v"}}, 1, std::nullopt}};
  EXPECT_THROW((void)encoder.encode_deletes("t", a_plain_put, Durability::use_default), std::logic_error);
}

std::string protocol_name(const testing::TestParamInfo<ThriftProtocolKind>& param) {
  return param.param == ThriftProtocolKind::binary ? "binary" : "compact";
}

INSTANTIATE_TEST_SUITE_P(Protocols, Thrift2PutEncoderTest,
                         testing::Values(ThriftProtocolKind::binary, ThriftProtocolKind::compact), protocol_name);

}  // namespace
}  // namespace hbingest::connectors
