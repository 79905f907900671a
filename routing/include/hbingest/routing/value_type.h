#pragma once
// Typed cell values: a field's value written exactly as HBase's Java
// org.apache.hadoop.hbase.util.Bytes.toBytes writes it, so that Bytes.toLong(cell) (toInt,
// toDouble, toBigDecimal, ...) in a Java, Phoenix or Spark reader returns the event's value; and the
// JSON the query API answers for such a cell. docs/rows.md, "Typed values", lists each type's bytes.
//
// Pure functions: no I/O, no state; safe from any number of threads.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "hbingest/keyspec/key_spec.h"

namespace hbingest::routing {

// The C++ names say the width; the names a configuration spells (value_type_name) are Java's.
enum class ValueType {
  text,        // "text": the record's own cell text (Record::append_text), not written here
  string,      // "string": a string's UTF-8 bytes (Bytes.toBytes(String))
  int64,       // "long": 8 bytes, big-endian two's complement
  int32,       // "int": 4 bytes
  int16,       // "short": 2 bytes
  float64,     // "double": IEEE-754 binary64, big-endian
  float32,     // "float": IEEE-754 binary32, big-endian
  boolean,     // "boolean": one byte, 0xff true, 0x00 false
  bigdecimal,  // "bigdecimal": 4-byte big-endian scale, then the unscaled value's minimal two's complement
  bytes,       // "bytes": a string's (or Avro/Protobuf bytes') bytes as they are
};

// "long" → int64, ...; nullopt for a name that is not a type.
std::optional<ValueType> value_type_named(std::string_view name);
// The configuration's name of `type`: "text", "string", "long", "int", "short", "double", "float",
// "boolean", "bigdecimal", "bytes".
std::string_view value_type_name(ValueType type);
// Every name value_type_named takes, in the enum's order (for "must be one of ..." messages).
std::span<const std::string_view> value_type_names();

// The largest decimal append_value writes for bigdecimal, in significant digits, and the largest
// unscaled value render_value reads back, in bytes (1,200 digits take at most 499 bytes). Both
// bound the quadratic decimal ↔ binary conversion a hostile value would otherwise make expensive.
inline constexpr std::size_t kMaxDecimalDigits = 1200;
inline constexpr std::size_t kMaxUnscaledBytes = 512;

// Appends `value` written as `type` to `out`. Returns nullopt when it did, else why it cannot and
// leaves `out` as it was ("2.5 is not a whole number for type long", "40000 is out of range for
// type short", "a string is not a boolean"). What each type takes (docs/rows.md):
//   long, int, short  an integer in range, or a double with an integral value in range (1e3 → 1000);
//                     never a string: "42" is refused, as Kafka Connect refuses it
//   double            a double as it is (NaN written as Java's Double.NaN, 0x7ff8000000000000); an
//                     integer rounded to the nearest double, as Java's (double) cast does
//   float             a double or an integer rounded to the nearest float, as Java's (float) cast;
//                     a finite value beyond float's range is refused rather than made infinite
//   boolean           true or false only
//   bigdecimal        an integer (scale 0); a finite double as the shortest decimal that reads back
//                     to it, with as many decimals as that text has and never a negative scale
//                     (2.5 → 25 scale 1, 1e20 → 10^20 scale 0); a string of decimal text read as
//                     Java's new BigDecimal(String) reads it ("-12.30" → -1230 scale 2,
//                     "1.5E+3" → 15 scale -2), at most kMaxDecimalDigits significant digits
//   string            a string that is valid UTF-8 (other bytes belong in `bytes`)
//   bytes             a string's bytes as they are
// Null (monostate) and nested values are refused for every type: the caller applies its
// null_fields policy before. `text` is a caller's error (std::invalid_argument): the record writes
// text cells itself.
[[nodiscard]] std::optional<std::string> append_value(const keyspec::FieldValue& value, ValueType type,
                                                      std::string& out);

// Sets `out` to the JSON value of a stored cell read as `type`, as the query API answers it.
// Returns nullopt when it did, else why the bytes are not a `type` (`out` untouched): "7 bytes,
// a long has 8". Any bytes are safe to give.
//   long, int, short  a JSON number
//   double, float     a JSON number (a float as its shortest decimal: 0.1f → 0.1); NaN, Infinity and
//                     -Infinity as those strings, JSON having no number for them
//   boolean           true or false (any non-zero byte is true, as Bytes.toBoolean reads it)
//   bigdecimal        a string: Java's BigDecimal.toString() of the value ("-12.30", "1.5E+3"),
//                     exact where a JSON number would become a client's double
//   text, string      a JSON string of the bytes (invalid UTF-8 is replaced when the JSON is
//                     written, as server::dump_json does, like Java's decoder)
//   bytes             a string: standard base64 with padding
[[nodiscard]] std::optional<std::string> render_value(std::string_view bytes, ValueType type, nlohmann::json& out);

}  // namespace hbingest::routing
