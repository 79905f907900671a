// held_bytes() against what malloc really hands out for in-flight events, per `columns` mode and
// for wide events (10,000 small fields): flow control bounds memory only if this is close.

#include "hbingest/ingest/held_bytes.h"

#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "default_cells.h"
#include "hbingest/event_formats/event_decoder.h"
#include "heap_in_use.h"

namespace hbingest::ingest {
namespace {

using hbingest::testing::heap_in_use;
using hbingest::testing::kSanitizerAllocator;

std::string event_with_fields(int fields, int n) {
  std::string out = R"({"event_id":"login","ts":1790000000000,"user_id":"u)" + std::to_string(n) + '"';
  for (int i = 0; i < fields; ++i) out += ",\"f" + std::to_string(i) + "\":" + std::to_string(i);
  return out + "}";
}

std::string event_with_text(int n) {
  return R"({"event_id":"login","ts":1790000000000,"user_id":"user-)" + std::to_string(n) +
         R"(","ip":"203.0.113.7","ua":"Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/120.0","ok":true})";
}

struct Held {
  std::size_t counted = 0;
  std::size_t allocated = 0;
};

// Decodes `count` messages and keeps each as the pipeline does (message + row), measuring the
// heap they hold with mallinfo2 and what held_bytes() says of them.
// Each message carries `headers` Kafka headers (names and values past the inline string capacity).
Held hold(config::ColumnsMode columns, int count, const std::function<std::string(int)>& payload, int headers = 0) {
  config::DecodeConfig decode;
  decode.columns = columns;
  decode.max_event_bytes = 16 * 1024 * 1024;
  event_formats::EventDecoder decoder(decode);
  event_formats::DecodedEvent event;
  std::vector<std::string> payloads;
  for (int n = 0; n < count; ++n) payloads.push_back(payload(n));
  // Warm the decoder's reusable buffers first: they are per pipeline, not per event.
  connectors::SourceMessage warm{"events", 0, 0, -1, std::nullopt, payloads.front()};
  EXPECT_FALSE(decoder.decode({warm.topic, warm.payload, warm.timestamp_ms}, event).has_value());

  Held held;
  const auto before = heap_in_use();
  // The slots are held too (a batch's vectors of rows and origins).
  std::vector<connectors::SourceMessage> messages;
  std::vector<connectors::RowMutation> rows;
  messages.reserve(count);
  rows.reserve(count);
  for (int n = 0; n < count; ++n) {
    connectors::SourceMessage message{"events", 3, n, -1, std::nullopt, payloads[n]};
    for (int h = 0; h < headers; ++h) {
      message.headers.push_back({"x-trace-header-" + std::to_string(h), std::string(40, 'v')});
    }
    const auto invalid = decoder.decode({message.topic, message.payload, message.timestamp_ms}, event);
    EXPECT_FALSE(invalid.has_value()) << invalid->message;
    connectors::RowMutation row;
    row.row = "00login" + std::string(24, 'k') + std::to_string(n);
    row.cells = testing::default_cells(decoder, decode, message.payload_bytes());
    held.counted += held_bytes(message) + held_bytes(row);
    messages.push_back(std::move(message));
    rows.push_back(std::move(row));
  }
  held.allocated = heap_in_use() - before;
  return held;
}

void expect_close(const Held& held, const char* what) {
  std::cout << what << ": held_bytes " << held.counted << ", malloc " << held.allocated << '\n';
  // Undercounting is the defect (memory beyond the bound); overcounting pauses early.
  EXPECT_GE(held.counted, held.allocated * 8 / 10)
      << what << ": counted " << held.counted << " of " << held.allocated << " bytes allocated";
  EXPECT_LE(held.counted, held.allocated * 13 / 10)
      << what << ": counted " << held.counted << " of " << held.allocated << " bytes allocated";
}

TEST(HeldBytes, MatchesTheHeapPerColumnsModeAndForWideEvents) {
  if (kSanitizerAllocator) GTEST_SKIP() << "sanitizer allocator: mallinfo2 does not see its heap";
  expect_close(hold(config::ColumnsMode::fields, 2000, event_with_text), "columns: fields");
  expect_close(hold(config::ColumnsMode::raw, 2000, event_with_text), "columns: raw");
  expect_close(hold(config::ColumnsMode::both, 2000, event_with_text), "columns: both");
  expect_close(hold(config::ColumnsMode::fields, 20, [](int n) { return event_with_fields(10000, n); }),
               "10,000 fields");
  expect_close(hold(config::ColumnsMode::fields, 2000, event_with_text, 8), "8 headers");
}

// Tombstones and null fields under delete_cell: rows that are keys and deleted columns only.
TEST(HeldBytes, MatchesTheHeapForDeletes) {
  if (kSanitizerAllocator) GTEST_SKIP() << "sanitizer allocator: mallinfo2 does not see its heap";
  constexpr int kRows = 2000;
  Held held;
  const auto before = heap_in_use();
  std::vector<connectors::RowMutation> rows;
  rows.reserve(kRows);
  for (int n = 0; n < kRows; ++n) {
    connectors::RowMutation row;
    row.row = "00order" + std::string(24, 'k') + std::to_string(n);
    if (n % 2 == 0) {
      row.kind = connectors::MutationKind::delete_row;
    } else {
      row.cells.push_back({"d", "status", "shipped"});
      for (int c = 0; c < 20; ++c) row.deleted_columns.push_back({"d", "nullable_field_number_" + std::to_string(c)});
    }
    held.counted += held_bytes(row);
    rows.push_back(std::move(row));
  }
  held.allocated = heap_in_use() - before;
  expect_close(held, "deletes");
}

}  // namespace
}  // namespace hbingest::ingest
