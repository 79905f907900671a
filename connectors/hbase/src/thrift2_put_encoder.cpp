#include "hbingest/connectors/thrift2_put_encoder.h"

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "hbase_types.h"

namespace hbingest::connectors {

namespace {

namespace gen = thrift2::gen;
using apache::thrift::protocol::T_CALL;
using apache::thrift::protocol::T_I32;
using apache::thrift::protocol::T_I64;
using apache::thrift::protocol::T_LIST;
using apache::thrift::protocol::T_MAP;
using apache::thrift::protocol::T_STOP;
using apache::thrift::protocol::T_STRING;
using apache::thrift::protocol::T_STRUCT;
using apache::thrift::protocol::TType;
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

// TBinaryProtocol's encoding for Thrift2PutEncoder::BinaryWriter: each put_* writes at `at` and
// returns where the next write goes, so that the caller keeps the cursor in a local variable.
std::uint8_t* put_byte(std::uint8_t* at, std::uint8_t byte) {
  *at = byte;
  return at + 1;
}

template <typename Int>
std::uint8_t* put_big_endian(std::uint8_t* at, Int value) {
  auto bits = static_cast<std::make_unsigned_t<Int>>(value);
  for (std::size_t i = sizeof(Int); i-- > 0;) {
    at[i] = static_cast<std::uint8_t>(bits & 0xffU);
    bits = static_cast<decltype(bits)>(bits >> 8);
  }
  return at + sizeof(Int);
}

// writeFieldBegin: the type byte and the i16 id.
std::uint8_t* put_field(std::uint8_t* at, TType type, std::int16_t id) {
  return put_big_endian(put_byte(at, static_cast<std::uint8_t>(type)), id);
}

// writeString / writeBinary: the i32 length and the bytes.
std::uint8_t* put_string(std::uint8_t* at, std::string_view bytes) {
  at = put_big_endian(at, static_cast<std::int32_t>(bytes.size()));
  if (!bytes.empty()) std::memcpy(at, bytes.data(), bytes.size());
  return at + bytes.size();
}

constexpr std::size_t kFieldBytes = 3;  // type byte, i16 id
constexpr std::size_t kListBytes = 5;   // element type byte, i32 size
constexpr std::size_t kMapBytes = 6;    // key and value type bytes, i32 size
constexpr std::size_t string_bytes(std::size_t n) { return 4 + n; }
constexpr std::string_view kMethod = "putMultiple";
constexpr std::string_view kDeleteMethod = "deleteMultiple";
constexpr std::string_view kTtlKey = "_ttl";
// Every TDelete says DELETE_COLUMNS, the IDL's default that the generated client always writes: for
// a column, every version with a timestamp <= the column's (Delete.addColumns); a TDelete without
// columns is a whole-row Delete(row, timestamp), which does not read the type (HBase's
// ThriftUtilities.deleteFromThrift).
constexpr std::int32_t kDeleteColumns = gen::TDeleteType::DELETE_COLUMNS;

// The parts of the batch a call carries: mutations of the wrong kind are the caller's bug.
void require_put(const RowMutation& row) {
  if (row.kind != MutationKind::put) throw std::logic_error("thrift2 encoder: a delete_row in a putMultiple");
}
void require_delete(const RowMutation& row) {
  if (row.kind == MutationKind::put && row.deleted_columns.empty()) {
    throw std::logic_error("thrift2 encoder: a put without deleted columns in a deleteMultiple");
  }
}

}  // namespace

class Thrift2PutEncoder::Writer {
 public:
  virtual ~Writer() = default;
  virtual std::span<const std::uint8_t> encode(const std::string& table, std::span<const RowMutation> rows,
                                               Durability durability) = 0;
  virtual std::span<const std::uint8_t> encode_deletes(const std::string& table, std::span<const RowMutation> rows,
                                                       Durability durability) = 0;
};

// The binary protocol (HBase's default, and ours): the message as TBinaryProtocol writes it (strict,
// VERSION_1), written by hand into a buffer sized for the call first. Why not through
// TBinaryProtocolT<TMemoryBuffer>, as the compact protocol below: that writes an order's row in
// ~130 writes of 1 to 8 bytes, and each loads and stores the buffer's write pointer through
// memory (a byte stored may alias it, so it cannot stay in a register). perf put 20 % of an
// order's CPU path on that chain of stores and reloads (bench/README.md, "The CPU path alone");
// here the cursor is a local. The layout: a field is its type byte and i16 id, a string its i32
// length and bytes, a list its element type byte and i32 size, a map its key and value type bytes
// and i32 size, a struct ends with a T_STOP byte; integers big-endian.
class Thrift2PutEncoder::BinaryWriter final : public Thrift2PutEncoder::Writer {
 public:
  std::span<const std::uint8_t> encode(const std::string& table, std::span<const RowMutation> rows,
                                       Durability durability) override {
    // THBaseServiceClient::send_putMultiple: the message, then THBaseService_putMultiple_pargs.
    std::size_t size = 4 + string_bytes(kMethod.size()) + 4;  // version|type, name, seqid
    size += kFieldBytes + string_bytes(table.size());         // table
    size += kFieldBytes + kListBytes;                         // tputs
    for (const auto& row : rows) {                            // each TPut
      require_put(row);
      size += tput_bytes(row, durability);
    }
    size += 1;  // the arguments' T_STOP
    std::uint8_t* at = begin_call(kMethod, table, rows.size(), size);
    for (const auto& row : rows) at = put_tput(at, row, durability);
    return end_call(at, size);
  }

  // THBaseServiceClient::send_deleteMultiple: the message, then THBaseService_deleteMultiple_pargs.
  std::span<const std::uint8_t> encode_deletes(const std::string& table, std::span<const RowMutation> rows,
                                               Durability durability) override {
    std::size_t size = 4 + string_bytes(kDeleteMethod.size()) + 4;  // version|type, name, seqid
    size += kFieldBytes + string_bytes(table.size());               // table
    size += kFieldBytes + kListBytes;                               // tdeletes
    for (const auto& row : rows) {                                  // each TDelete
      require_delete(row);
      size += tdelete_bytes(row, durability);
    }
    size += 1;  // the arguments' T_STOP
    std::uint8_t* at = begin_call(kDeleteMethod, table, rows.size(), size);
    for (const auto& row : rows) at = put_tdelete(at, row, durability);
    return end_call(at, size);
  }

 private:
  // Makes room for a call of `size` bytes and writes its start: the message header, the table and
  // the list header of `elements` structs (both methods' arguments are fields 1 and 2 so).
  std::uint8_t* begin_call(std::string_view method, const std::string& table, std::size_t elements, std::size_t size) {
    if (buffer_.size() > kKeptBufferBytes) buffer_ = {};
    if (buffer_.size() < size) buffer_.resize(size);
    std::uint8_t* at = buffer_.data();
    at = put_big_endian(at, static_cast<std::int32_t>(apache::thrift::protocol::TBinaryProtocol::VERSION_1) | T_CALL);
    at = put_string(at, method);
    at = put_big_endian(at, std::int32_t{0});  // seqid
    at = put_string(put_field(at, T_STRING, 1), table);
    at = put_byte(put_field(at, T_LIST, 2), T_STRUCT);
    return put_big_endian(at, static_cast<std::int32_t>(elements));
  }

  std::span<const std::uint8_t> end_call(std::uint8_t* at, std::size_t size) {
    at = put_byte(at, T_STOP);
    if (at != buffer_.data() + size) {  // a size computed that does not match the writes
      throw std::logic_error("thrift2 encoder: sized the call as " + std::to_string(size) + " bytes, wrote " +
                             std::to_string(at - buffer_.data()));
    }
    return {buffer_.data(), size};
  }

  // The bytes put_tdelete writes for `row`.
  static std::size_t tdelete_bytes(const RowMutation& row, Durability durability) {
    std::size_t size = kFieldBytes + string_bytes(row.row.size());  // row
    if (row.kind == MutationKind::put) {                            // columns
      size += kFieldBytes + kListBytes;
      for (const auto& column : row.deleted_columns) {  // family, qualifier, timestamp, T_STOP
        size += 3 * kFieldBytes + string_bytes(column.family.size()) + string_bytes(column.qualifier.size()) + 8 + 1;
      }
    }
    size += kFieldBytes + 8;  // timestamp
    size += kFieldBytes + 4;  // deleteType
    if (durability != Durability::use_default) size += kFieldBytes + 4;
    return size + 1;  // T_STOP
  }

  // TDelete::write: row, columns (each with the row's timestamp: the one HBase reads for a
  // column), timestamp (the one it reads for a whole row), deleteType, durability (unless the
  // default). No attributes: a TTL means nothing to a delete.
  static std::uint8_t* put_tdelete(std::uint8_t* at, const RowMutation& row, Durability durability) {
    at = put_string(put_field(at, T_STRING, 1), row.row);
    if (row.kind == MutationKind::put) {
      at = put_byte(put_field(at, T_LIST, 2), T_STRUCT);
      at = put_big_endian(at, static_cast<std::int32_t>(row.deleted_columns.size()));
      for (const auto& column : row.deleted_columns) {  // TColumn::write: family, qualifier, timestamp
        at = put_string(put_field(at, T_STRING, 1), column.family);
        at = put_string(put_field(at, T_STRING, 2), column.qualifier);
        at = put_big_endian(put_field(at, T_I64, 3), row.timestamp_ms);
        at = put_byte(at, T_STOP);
      }
    }
    at = put_big_endian(put_field(at, T_I64, 3), row.timestamp_ms);
    at = put_big_endian(put_field(at, T_I32, 4), kDeleteColumns);
    if (durability != Durability::use_default) {
      at = put_big_endian(put_field(at, T_I32, 7), static_cast<std::int32_t>(durability));
    }
    return put_byte(at, T_STOP);
  }

  // The bytes put_tput writes for `row`.
  static std::size_t tput_bytes(const RowMutation& row, Durability durability) {
    std::size_t size = kFieldBytes + string_bytes(row.row.size());  // row
    size += kFieldBytes + kListBytes;                               // columnValues
    for (const auto& cell : row.cells) {                            // family, qualifier, value, T_STOP
      size += 3 * kFieldBytes + string_bytes(cell.family.size()) + string_bytes(cell.qualifier.size()) +
              string_bytes(cell.value.size()) + 1;
    }
    size += kFieldBytes + 8;  // timestamp
    if (row.ttl_ms) {         // attributes: {"_ttl": 8 bytes}
      size += kFieldBytes + kMapBytes + string_bytes(kTtlKey.size()) + string_bytes(8);
    }
    if (durability != Durability::use_default) size += kFieldBytes + 4;
    return size + 1;  // T_STOP
  }

  // TPut::write: row, columnValues, timestamp (always set), attributes (the TTL, when given),
  // durability (unless the default).
  static std::uint8_t* put_tput(std::uint8_t* at, const RowMutation& row, Durability durability) {
    at = put_string(put_field(at, T_STRING, 1), row.row);
    at = put_byte(put_field(at, T_LIST, 2), T_STRUCT);
    at = put_big_endian(at, static_cast<std::int32_t>(row.cells.size()));
    for (const auto& cell : row.cells) {  // TColumnValue::write: family, qualifier, value
      at = put_string(put_field(at, T_STRING, 1), cell.family);
      at = put_string(put_field(at, T_STRING, 2), cell.qualifier);
      at = put_string(put_field(at, T_STRING, 3), cell.value);
      at = put_byte(at, T_STOP);
    }
    at = put_big_endian(put_field(at, T_I64, 3), row.timestamp_ms);
    if (row.ttl_ms) {  // the `_ttl` attribute: Bytes.toBytes(long), 8 bytes big-endian
      at = put_byte(put_byte(put_field(at, T_MAP, 5), T_STRING), T_STRING);
      at = put_big_endian(at, std::int32_t{1});
      at = put_string(at, kTtlKey);
      at = put_big_endian(put_big_endian(at, std::int32_t{8}), *row.ttl_ms);
    }
    if (durability != Durability::use_default) {
      at = put_big_endian(put_field(at, T_I32, 6), static_cast<std::int32_t>(durability));
    }
    return put_byte(at, T_STOP);
  }

  std::vector<std::uint8_t> buffer_;  // kept between calls, up to kKeptBufferBytes
};

// The compact protocol through Thrift's own TCompactProtocolT, bound statically to a reused memory
// buffer, so that every write below is a direct (inlined) call, not a virtual one per field as in
// the generated code.
template <typename Protocol>
class Thrift2PutEncoder::ProtocolWriter final : public Thrift2PutEncoder::Writer {
 public:
  ProtocolWriter() : buffer_(std::make_shared<TMemoryBuffer>(kInitialBufferBytes)), protocol_(buffer_) {}

  std::span<const std::uint8_t> encode(const std::string& table, std::span<const RowMutation> rows,
                                       Durability durability) override {
    // THBaseServiceClient::send_putMultiple: the message, then THBaseService_putMultiple_pargs.
    begin_call("putMultiple", "THBaseService_putMultiple_pargs", table, "tputs", rows.size());
    for (const auto& row : rows) {
      require_put(row);
      write_put(row, durability);
    }
    return end_call();
  }

  std::span<const std::uint8_t> encode_deletes(const std::string& table, std::span<const RowMutation> rows,
                                               Durability durability) override {
    // THBaseServiceClient::send_deleteMultiple: the message, then THBaseService_deleteMultiple_pargs.
    begin_call("deleteMultiple", "THBaseService_deleteMultiple_pargs", table, "tdeletes", rows.size());
    for (const auto& row : rows) {
      require_delete(row);
      write_delete(row, durability);
    }
    return end_call();
  }

 private:
  // A call of `method` on a fresh buffer: its arguments struct up to the list of `count` structs
  // (field 2, `list`) after the table (field 1), as the generated send_* methods write them.
  void begin_call(const char* method, const char* arguments, const std::string& table, const char* list,
                  std::size_t count) {
    if (buffer_->getBufferSize() > kKeptBufferBytes) buffer_->resetBuffer(kInitialBufferBytes);
    buffer_->resetBuffer();
    protocol_.writeMessageBegin(method, T_CALL, 0);
    protocol_.writeStructBegin(arguments);
    protocol_.writeFieldBegin("table", T_STRING, 1);
    protocol_.writeBinary(table);
    protocol_.writeFieldEnd();
    protocol_.writeFieldBegin(list, T_LIST, 2);
    protocol_.writeListBegin(T_STRUCT, static_cast<std::uint32_t>(count));
  }
  // Closes the list opened by the caller, the arguments and the message.
  std::span<const std::uint8_t> end_call() {
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

  // TDelete::write, as BinaryWriter::put_tdelete.
  void write_delete(const RowMutation& row, Durability durability) {
    protocol_.writeStructBegin("TDelete");
    protocol_.writeFieldBegin("row", T_STRING, 1);
    protocol_.writeBinary(row.row);
    protocol_.writeFieldEnd();
    if (row.kind == MutationKind::put) {
      protocol_.writeFieldBegin("columns", T_LIST, 2);
      protocol_.writeListBegin(T_STRUCT, static_cast<std::uint32_t>(row.deleted_columns.size()));
      for (const auto& column : row.deleted_columns) {
        protocol_.writeStructBegin("TColumn");
        protocol_.writeFieldBegin("family", T_STRING, 1);
        protocol_.writeBinary(column.family);
        protocol_.writeFieldEnd();
        protocol_.writeFieldBegin("qualifier", T_STRING, 2);
        protocol_.writeBinary(column.qualifier);
        protocol_.writeFieldEnd();
        protocol_.writeFieldBegin("timestamp", T_I64, 3);
        protocol_.writeI64(row.timestamp_ms);
        protocol_.writeFieldEnd();
        protocol_.writeFieldStop();
        protocol_.writeStructEnd();
      }
      protocol_.writeListEnd();
      protocol_.writeFieldEnd();
    }
    protocol_.writeFieldBegin("timestamp", T_I64, 3);
    protocol_.writeI64(row.timestamp_ms);
    protocol_.writeFieldEnd();
    protocol_.writeFieldBegin("deleteType", T_I32, 4);
    protocol_.writeI32(kDeleteColumns);
    protocol_.writeFieldEnd();
    if (durability != Durability::use_default) {
      protocol_.writeFieldBegin("durability", T_I32, 7);
      protocol_.writeI32(static_cast<std::int32_t>(durability));
      protocol_.writeFieldEnd();
    }
    protocol_.writeFieldStop();
    protocol_.writeStructEnd();
  }

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
  using apache::thrift::protocol::TCompactProtocolT;
  if (protocol == ThriftProtocolKind::binary) {
    writer_ = std::make_unique<BinaryWriter>();
  } else {
    writer_ = std::make_unique<ProtocolWriter<TCompactProtocolT<TMemoryBuffer>>>();
  }
}

Thrift2PutEncoder::~Thrift2PutEncoder() = default;

std::span<const std::uint8_t> Thrift2PutEncoder::encode(const std::string& table, std::span<const RowMutation> rows,
                                                        Durability durability) {
  return writer_->encode(table, rows, durability);
}

std::span<const std::uint8_t> Thrift2PutEncoder::encode_deletes(const std::string& table,
                                                                std::span<const RowMutation> rows,
                                                                Durability durability) {
  return writer_->encode_deletes(table, rows, durability);
}

}  // namespace hbingest::connectors
