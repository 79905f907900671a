#pragma once
// The bytes of one Thrift2 putMultiple (or deleteMultiple) call, encoded straight from our RowMutations.
//
// Why not the generated client's putMultiple: it takes TPut objects, so every row key, family,
// qualifier and value was first copied into a TPut (and freed after the call), and the generated
// writer then pushed every field through virtual protocol and transport calls: the conversion,
// the destruction and the serialisation together were about 20 % of the daemon's CPU in perf
// (bench/README.md, "CPU per event"). This writes the same bytes, the message exactly as
// THBaseServiceClient::send_putMultiple writes it (fields in the IDL's order with its ids,
// connectors/hbase/thrift/hbase.thrift), into a reused buffer: the binary protocol by hand with a
// local cursor (why: thrift2_put_encoder.cpp), the compact one through Thrift's own protocol class
// bound statically to the buffer. No copy of a cell, no allocation once the buffer has grown.
// tests/unit/hbase/thrift2_put_encoder_test.cpp compares the bytes with the generated client's.
//
// Not thread-safe: one encoder per writer (it reuses its buffer).

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "hbingest/connectors/hbase_types.h"
#include "hbingest/connectors/thrift2_options.h"

namespace hbingest::connectors {

class Thrift2PutEncoder {
 public:
  explicit Thrift2PutEncoder(ThriftProtocolKind protocol);
  ~Thrift2PutEncoder();
  Thrift2PutEncoder(const Thrift2PutEncoder&) = delete;
  Thrift2PutEncoder& operator=(const Thrift2PutEncoder&) = delete;

  // The whole call message putMultiple(table, rows) as the protocol writes it (a transport adds
  // its framing, if any, when it is sent). Valid until the next encode().
  // Every row must be a put (MutationKind::put); its deleted_columns are not in this call.
  std::span<const std::uint8_t> encode(const std::string& table, std::span<const RowMutation> rows,
                                       Durability durability);
  // The call deleteMultiple(table, deletes) for the delete part of each row: a delete_row is a
  // TDelete of the whole row at its timestamp, a put's deleted_columns one TDelete of those columns
  // (DELETE_COLUMNS, each at the row's timestamp). Every row must have a delete part (a delete_row,
  // or a put with deleted_columns). Deletes are not the hot path; they share the buffer and the
  // byte-for-byte test with puts so that both calls have one set of limits (the frame size).
  std::span<const std::uint8_t> encode_deletes(const std::string& table, std::span<const RowMutation> rows,
                                               Durability durability);

 private:
  class Writer;
  class BinaryWriter;
  template <typename Protocol>
  class ProtocolWriter;
  std::unique_ptr<Writer> writer_;
};

}  // namespace hbingest::connectors
