#include "hbingest/connectors/thrift2_put_encoder.h"

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include "hbase_types.h"

namespace hbingest::connectors {

namespace {

namespace gen = thrift2::gen;
using apache::thrift::protocol::T_CALL;
using apache::thrift::protocol::T_I32;
using apache::thrift::protocol::T_I64;
using apache::thrift::protocol::T_LIST;
using apache::thrift::protocol::T_MAP;
using apache::thrift::protocol::T_STRING;
using apache::thrift::protocol::T_STRUCT;
using apache::thrift::transport::TMemoryBuffer;

// Durability goes on the wire as the IDL's TDurability number.
static_assert(static_cast<int>(Durability::use_default) == gen::TDurability::USE_DEFAULT);
static_assert(static_cast<int>(Durability::skip_wal) == gen::TDurability::SKIP_WAL);
static_assert(static_cast<int>(Durability::async_wal) == gen::TDurability::ASYNC_WAL);
static_assert(static_cast<int>(Durability::sync_wal) == gen::TDurability::SYNC_WAL);
static_assert(static_cast<int>(Durability::fsync_wal) == gen::TDurability::FSYNC_WAL);

constexpr std::uint32_t kInitialBufferBytes = 64 * 1024;
// A batch of a few huge rows may grow the buffer far beyond a usual batch (2 MiB by default); a
// buffer past this is given back after use instead of being kept for the writer's lifetime.
constexpr std::uint32_t kKeptBufferBytes = 8 * 1024 * 1024;

// The `_ttl` attribute HBase reads per mutation: Bytes.toBytes(long), 8 bytes big-endian.
void encode_ttl(std::int64_t ttl_ms, std::string& out) {
  out.assign(8, '\0');
  auto value = static_cast<std::uint64_t>(ttl_ms);
  for (int i = 7; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = static_cast<char>(value & 0xffU);
    value >>= 8;
  }
}

}  // namespace

class Thrift2PutEncoder::Writer {
 public:
  virtual ~Writer() = default;
  virtual std::span<const std::uint8_t> encode(const std::string& table, std::span<const RowMutation> rows,
                                               Durability durability) = 0;
};

// One instance per protocol, so that every write below is a direct (inlined) call on the
// concrete protocol and buffer types, not a virtual one per field as in the generated code.
template <typename Protocol>
class Thrift2PutEncoder::ProtocolWriter final : public Thrift2PutEncoder::Writer {
 public:
  ProtocolWriter() : buffer_(std::make_shared<TMemoryBuffer>(kInitialBufferBytes)), protocol_(buffer_) {}

  std::span<const std::uint8_t> encode(const std::string& table, std::span<const RowMutation> rows,
                                       Durability durability) override {
    if (buffer_->getBufferSize() > kKeptBufferBytes) buffer_->resetBuffer(kInitialBufferBytes);
    buffer_->resetBuffer();
    // THBaseServiceClient::send_putMultiple: the message, then THBaseService_putMultiple_pargs.
    protocol_.writeMessageBegin("putMultiple", T_CALL, 0);
    protocol_.writeStructBegin("THBaseService_putMultiple_pargs");
    protocol_.writeFieldBegin("table", T_STRING, 1);
    protocol_.writeBinary(table);
    protocol_.writeFieldEnd();
    protocol_.writeFieldBegin("tputs", T_LIST, 2);
    protocol_.writeListBegin(T_STRUCT, static_cast<std::uint32_t>(rows.size()));
    for (const auto& row : rows) write_put(row, durability);
    protocol_.writeListEnd();
    protocol_.writeFieldEnd();
    protocol_.writeFieldStop();
    protocol_.writeStructEnd();
    protocol_.writeMessageEnd();
    std::uint8_t* data = nullptr;
    std::uint32_t size = 0;
    buffer_->getBuffer(&data, &size);
    return {data, size};
  }

 private:
  // TPut::write: row, columnValues, timestamp (always set), attributes (the TTL, when given),
  // durability (unless the default).
  void write_put(const RowMutation& row, Durability durability) {
    protocol_.writeStructBegin("TPut");
    protocol_.writeFieldBegin("row", T_STRING, 1);
    protocol_.writeBinary(row.row);
    protocol_.writeFieldEnd();
    protocol_.writeFieldBegin("columnValues", T_LIST, 2);
    protocol_.writeListBegin(T_STRUCT, static_cast<std::uint32_t>(row.cells.size()));
    for (const auto& cell : row.cells) write_column_value(cell);
    protocol_.writeListEnd();
    protocol_.writeFieldEnd();
    protocol_.writeFieldBegin("timestamp", T_I64, 3);
    protocol_.writeI64(row.timestamp_ms);
    protocol_.writeFieldEnd();
    if (row.ttl_ms) {
      protocol_.writeFieldBegin("attributes", T_MAP, 5);
      protocol_.writeMapBegin(T_STRING, T_STRING, 1);
      protocol_.writeBinary(ttl_key_);
      encode_ttl(*row.ttl_ms, ttl_value_);
      protocol_.writeBinary(ttl_value_);
      protocol_.writeMapEnd();
      protocol_.writeFieldEnd();
    }
    if (durability != Durability::use_default) {
      protocol_.writeFieldBegin("durability", T_I32, 6);
      protocol_.writeI32(static_cast<std::int32_t>(durability));
      protocol_.writeFieldEnd();
    }
    protocol_.writeFieldStop();
    protocol_.writeStructEnd();
  }

  // TColumnValue::write: family, qualifier, value (a cell's timestamp is the row's).
  void write_column_value(const Cell& cell) {
    protocol_.writeStructBegin("TColumnValue");
    protocol_.writeFieldBegin("family", T_STRING, 1);
    protocol_.writeBinary(cell.family);
    protocol_.writeFieldEnd();
    protocol_.writeFieldBegin("qualifier", T_STRING, 2);
    protocol_.writeBinary(cell.qualifier);
    protocol_.writeFieldEnd();
    protocol_.writeFieldBegin("value", T_STRING, 3);
    protocol_.writeBinary(cell.value);
    protocol_.writeFieldEnd();
    protocol_.writeFieldStop();
    protocol_.writeStructEnd();
  }

  std::shared_ptr<TMemoryBuffer> buffer_;
  Protocol protocol_;
  const std::string ttl_key_ = "_ttl";
  std::string ttl_value_;  // 8 bytes: fits the string's inline buffer, never allocates
};

Thrift2PutEncoder::Thrift2PutEncoder(ThriftProtocolKind protocol) {
  using apache::thrift::protocol::TBinaryProtocolT;
  using apache::thrift::protocol::TCompactProtocolT;
  if (protocol == ThriftProtocolKind::binary) {
    writer_ = std::make_unique<ProtocolWriter<TBinaryProtocolT<TMemoryBuffer>>>();
  } else {
    writer_ = std::make_unique<ProtocolWriter<TCompactProtocolT<TMemoryBuffer>>>();
  }
}

Thrift2PutEncoder::~Thrift2PutEncoder() = default;

std::span<const std::uint8_t> Thrift2PutEncoder::encode(const std::string& table, std::span<const RowMutation> rows,
                                                        Durability durability) {
  return writer_->encode(table, rows, durability);
}

}  // namespace hbingest::connectors
