// hbingest's view of the HBase Thrift2 gateway (THBaseService).
//
// This is our own IDL: only the calls and struct fields hbingest uses. Every field id, type and
// method name matches HBase's thrift2 wire protocol (hbase-thrift, org/apache/hadoop/hbase/thrift2/
// hbase.thrift, HBase 2.x), so the generated client talks to a stock Thrift2 server. Fields we do
// not declare are skipped by the Thrift decoder when the server sends them. Ids that look skipped
// (TPut has no field 4, TDelete none of 5) are skipped on the wire too: do not "fix" them.

namespace cpp hbingest.thrift2.gen

struct TTimeRange {
  1: required i64 minStamp,
  2: required i64 maxStamp
}

struct TColumn {
  1: required binary family,
  2: optional binary qualifier,
  3: optional i64 timestamp
}

struct TColumnValue {
  1: required binary family,
  2: required binary qualifier,
  3: required binary value,
  4: optional i64 timestamp,
  5: optional binary tags,
  6: optional i8 type
}

struct TResult {
  1: optional binary row,
  2: required list<TColumnValue> columnValues,
  3: optional bool stale = false,
  4: optional bool partial = false
}

enum TDeleteType {
  DELETE_COLUMN = 0,
  DELETE_COLUMNS = 1,
  DELETE_FAMILY = 2,
  DELETE_FAMILY_VERSION = 3
}

enum TDurability {
  USE_DEFAULT = 0,
  SKIP_WAL = 1,
  ASYNC_WAL = 2,
  SYNC_WAL = 3,
  FSYNC_WAL = 4
}

struct TGet {
  1: required binary row,
  2: optional list<TColumn> columns,
  3: optional i64 timestamp,
  4: optional TTimeRange timeRange,
  5: optional i32 maxVersions,
  6: optional binary filterString,
  7: optional map<binary, binary> attributes
}

// attributes is field 5 (4 is unused on the wire). `_ttl` here carries the per-mutation TTL as
// 8-byte big-endian milliseconds.
struct TPut {
  1: required binary row,
  2: required list<TColumnValue> columnValues,
  3: optional i64 timestamp,
  5: optional map<binary, binary> attributes,
  6: optional TDurability durability
}

struct TDelete {
  1: required binary row,
  2: optional list<TColumn> columns,
  3: optional i64 timestamp,
  4: optional TDeleteType deleteType = 1,
  6: optional map<binary, binary> attributes,
  7: optional TDurability durability
}

struct TScan {
  1: optional binary startRow,
  2: optional binary stopRow,
  3: optional list<TColumn> columns,
  4: optional i32 caching,
  5: optional i32 maxVersions = 1,
  6: optional TTimeRange timeRange,
  7: optional binary filterString,
  8: optional i32 batchSize,
  9: optional map<binary, binary> attributes,
  11: optional bool reversed,
  12: optional bool cacheBlocks,
  15: optional i32 limit
}

enum TBloomFilterType {
  NONE = 0,
  ROW = 1,
  ROWCOL = 2,
  ROWPREFIX_FIXED_LENGTH = 3
}

enum TCompressionAlgorithm {
  LZO = 0,
  GZ = 1,
  NONE = 2,
  SNAPPY = 3,
  LZ4 = 4,
  BZIP2 = 5,
  ZSTD = 6
}

enum TDataBlockEncoding {
  NONE = 0,
  PREFIX = 2,
  DIFF = 3,
  FAST_DIFF = 4,
  ROW_INDEX_V1 = 7
}

struct TTableName {
  1: optional binary ns,
  2: required binary qualifier
}

struct TColumnFamilyDescriptor {
  1: required binary name,
  2: optional map<binary, binary> attributes,
  3: optional map<string, string> configuration,
  4: optional i32 blockSize,
  5: optional TBloomFilterType bloomnFilterType,
  6: optional TCompressionAlgorithm compressionType,
  7: optional i16 dfsReplication,
  8: optional TDataBlockEncoding dataBlockEncoding,
  10: optional i32 maxVersions,
  11: optional i32 minVersions,
  12: optional i32 scope,
  13: optional i32 timeToLive,
  14: optional bool blockCacheEnabled,
  20: optional bool inMemory
}

struct TTableDescriptor {
  1: required TTableName tableName,
  2: optional list<TColumnFamilyDescriptor> columns,
  3: optional map<binary, binary> attributes,
  4: optional TDurability durability
}

struct TNamespaceDescriptor {
  1: required string name,
  2: optional map<string, string> configuration
}

// canRetry is HBase 2.x's verdict: !(cause instanceof DoNotRetryIOException). Older gateways leave
// it out; see connectors/hbase/src/hbase_error_policy.cpp for what that means.
exception TIOError {
  1: optional string message,
  2: optional bool canRetry
}

exception TIllegalArgument {
  1: optional string message
}

service THBaseService {
  TResult get(1: required binary table, 2: required TGet tget) throws (1: TIOError io)

  list<TResult> getMultiple(1: required binary table, 2: required list<TGet> tgets) throws (1: TIOError io)

  void put(1: required binary table, 2: required TPut tput) throws (1: TIOError io)

  void putMultiple(1: required binary table, 2: required list<TPut> tputs) throws (1: TIOError io)

  list<TDelete> deleteMultiple(1: required binary table, 2: required list<TDelete> tdeletes) throws (1: TIOError io)

  i32 openScanner(1: required binary table, 2: required TScan tscan) throws (1: TIOError io)

  list<TResult> getScannerRows(1: required i32 scannerId, 2: i32 numRows = 1)
      throws (1: TIOError io, 2: TIllegalArgument ia)

  void closeScanner(1: required i32 scannerId) throws (1: TIOError io, 2: TIllegalArgument ia)

  list<TResult> getScannerResults(1: required binary table, 2: required TScan tscan, 3: i32 numRows = 1)
      throws (1: TIOError io)

  TTableDescriptor getTableDescriptor(1: required TTableName table) throws (1: TIOError io)

  bool tableExists(1: TTableName tableName) throws (1: TIOError io)

  void createTable(1: required TTableDescriptor desc, 2: list<binary> splitKeys) throws (1: TIOError io)

  void deleteTable(1: required TTableName tableName) throws (1: TIOError io)

  void disableTable(1: required TTableName tableName) throws (1: TIOError io)

  bool isTableEnabled(1: required TTableName tableName) throws (1: TIOError io)

  void createNamespace(1: required TNamespaceDescriptor namespaceDesc) throws (1: TIOError io)

  TNamespaceDescriptor getNamespaceDescriptor(1: required string name) throws (1: TIOError io)
}
