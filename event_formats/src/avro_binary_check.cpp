#include "avro_binary_check.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace hbingest::event_formats::avro {
namespace {

// Decimals are rendered through 128-bit integers (avro_record.cpp); wider ones are refused here.
constexpr std::size_t kMaxDecimalBytes = 16;

// The width of a big-endian two's complement integer without its sign-extension bytes.
std::size_t significant_bytes(std::string_view bytes) {
  std::size_t skip = 0;
  while (skip + 1 < bytes.size()) {
    const auto byte = static_cast<unsigned char>(bytes[skip]);
    const auto next = static_cast<unsigned char>(bytes[skip + 1]);
    if (!((byte == 0x00 && next < 0x80) || (byte == 0xFF && next >= 0x80))) break;
    ++skip;
  }
  return bytes.size() - skip;
}

class Checker {
 public:
  explicit Checker(std::string_view payload)
      : begin_(payload.data()),
        at_(payload.data()),
        end_(payload.data() + payload.size()),
        items_left_(payload.size()) {}

  std::optional<std::string> check(const Node& root, std::vector<FieldBytes>& fields) {
    fields.clear();
    for (const auto& field : root.fields) {
      // A top-level union is its branch: the record's readers see the value, not the union.
      const Node* node = field.node;
      while (node->type == AVRO_UNION) {
        if (!branch(*node, node)) return with_path(field.name);
      }
      const char* start = at_;
      if (!value(*node, 2)) return with_path(field.name);
      fields.push_back({node, std::string_view(start, static_cast<std::size_t>(at_ - start))});
    }
    if (at_ != end_) {
      return std::to_string(end_ - at_) + " trailing bytes after the record (it ends at byte " +
             std::to_string(at_ - begin_) + ")";
    }
    return std::nullopt;
  }

 private:
  // Each check returns false after fail(); the callers on the way out add their path segment.
  bool fail(std::string message) {
    message_ = std::move(message);
    return false;
  }
  std::size_t left() const { return static_cast<std::size_t>(end_ - at_); }
  std::size_t position() const { return static_cast<std::size_t>(at_ - begin_); }
  static std::string byte(std::size_t position) { return "byte " + std::to_string(position); }
  std::string offset() const { return byte(position()); }

  // A zig-zag varint as Avro writes one: at most 10 bytes.
  bool varint(std::int64_t& out, const char* what) {
    // One byte: most lengths, counts, indexes and small numbers.
    if (at_ != end_ && (static_cast<unsigned char>(*at_) & 0x80) == 0) [[likely]] {
      const auto bits = static_cast<std::uint64_t>(static_cast<unsigned char>(*at_++));
      out = static_cast<std::int64_t>((bits >> 1) ^ (~(bits & 1) + 1));
      return true;
    }
    return long_varint(out, what);
  }
  bool long_varint(std::int64_t& out, const char* what) {
    std::uint64_t value = 0;
    for (int i = 0; i < 10; ++i) {
      if (at_ == end_) return fail("truncated: " + std::string(what) + " runs past the end (" + offset() + ")");
      const auto next = static_cast<unsigned char>(*at_++);
      value |= static_cast<std::uint64_t>(next & 0x7F) << (7 * i);
      if ((next & 0x80) == 0) {
        out = static_cast<std::int64_t>((value >> 1) ^ (~(value & 1) + 1));
        return true;
      }
    }
    return fail(std::string(what) + " is a varint longer than 10 bytes (" + offset() + ")");
  }

  bool skip(std::size_t bytes, const char* what) {
    if (bytes > left()) {
      return fail("truncated: " + std::string(what) + " of " + std::to_string(bytes) + " bytes at " + offset() +
                  ", only " + std::to_string(left()) + " left");
    }
    at_ += bytes;
    return true;
  }

  // A length-prefixed string or bytes; `out` views it.
  bool bytes(std::string_view& out, const char* what) {
    const auto start = position();
    std::int64_t length = 0;
    if (!varint(length, what)) return false;
    if (length < 0)
      return fail(std::string(what) + " length " + std::to_string(length) + " is negative (" + byte(start) + ")");
    if (static_cast<std::uint64_t>(length) > left()) {
      return fail("truncated: " + std::string(what) + " length " + std::to_string(length) + " at " + byte(start) +
                  ", only " + std::to_string(left()) + " bytes left");
    }
    out = std::string_view(at_, static_cast<std::size_t>(length));
    at_ += length;
    return true;
  }

  bool branch(const Node& node, const Node*& chosen) {
    std::int64_t number = 0;
    if (!varint(number, "union branch")) return false;
    if (number < 0 || static_cast<std::uint64_t>(number) >= node.branches.size()) {
      return fail("union branch " + std::to_string(number) + " is out of range (the union has " +
                  std::to_string(node.branches.size()) + " branches)");
    }
    chosen = node.branches[static_cast<std::size_t>(number)];
    return true;
  }

  bool decimal_width(const Node& node, std::string_view unscaled) {
    if (node.logical != LogicalType::decimal || significant_bytes(unscaled) <= kMaxDecimalBytes) return true;
    return fail("decimal of " + std::to_string(unscaled.size()) + " bytes is wider than 128 bits");
  }

  bool value(const Node& node, int depth) {
    if (depth > kMaxNesting) return fail("nested deeper than " + std::to_string(kMaxNesting) + " levels");
    std::int64_t number = 0;
    std::string_view text;
    switch (node.type) {
      case AVRO_NULL:
        return true;
      case AVRO_BOOLEAN:
        return skip(1, "boolean");
      case AVRO_INT32:
        if (!varint(number, "int")) return false;
        if (number < std::numeric_limits<std::int32_t>::min() || number > std::numeric_limits<std::int32_t>::max()) {
          return fail("int " + std::to_string(number) + " is out of the int range");
        }
        return true;
      case AVRO_INT64:
        return varint(number, "long");
      case AVRO_FLOAT:
        return skip(4, "float");
      case AVRO_DOUBLE:
        return skip(8, "double");
      case AVRO_STRING:
        return bytes(text, "string");
      case AVRO_BYTES:
        return bytes(text, "bytes") && decimal_width(node, text);
      case AVRO_FIXED: {
        const auto size = static_cast<std::size_t>(node.fixed_size);
        if (size > left()) return skip(size, "fixed");
        text = std::string_view(at_, size);
        at_ += size;
        return decimal_width(node, text);
      }
      case AVRO_ENUM:
        if (!varint(number, "enum index")) return false;
        if (number < 0 || static_cast<std::uint64_t>(number) >= node.symbols.size()) {
          return fail("enum index " + std::to_string(number) + " is out of range (" + node.name + " has " +
                      std::to_string(node.symbols.size()) + " symbols)");
        }
        return true;
      case AVRO_UNION: {
        const Node* chosen = nullptr;
        return branch(node, chosen) && value(*chosen, depth + 1);
      }
      case AVRO_RECORD:
        for (const auto& field : node.fields) {
          if (!value(*field.node, depth + 1)) {
            path_.push_back(field.name);
            return false;
          }
        }
        return true;
      case AVRO_ARRAY:
      case AVRO_MAP:
        return items(node, depth);
      default:
        return fail("a type avro-c does not read");
    }
  }

  // Array and map blocks: a count, negative when a byte size follows; a zero count ends them.
  bool items(const Node& node, int depth) {
    const bool map = node.type == AVRO_MAP;
    std::int64_t index = 0;
    for (;;) {
      const auto start = position();
      std::int64_t count = 0;
      if (!varint(count, map ? "map block count" : "array block count")) return false;
      if (count == 0) return true;
      if (count < 0) {
        if (count == std::numeric_limits<std::int64_t>::min()) return fail("block count -2^63 at " + byte(start));
        count = -count;
        std::int64_t block_bytes = 0;
        if (!varint(block_bytes, "block size")) return false;
        if (block_bytes < 0 || static_cast<std::uint64_t>(block_bytes) > left()) {
          return fail("block size " + std::to_string(block_bytes) + " at " + byte(start) + ", " +
                      std::to_string(left()) + " bytes left");
        }
      }
      const auto claimed = static_cast<std::uint64_t>(count);
      // Every item that is not written in zero bytes (and every map key) takes one byte at least.
      if ((map || !node.items->zero_bytes) && claimed > left()) {
        return fail("truncated: a block of " + std::to_string(count) + " items at " + byte(start) + ", only " +
                    std::to_string(left()) + " bytes left");
      }
      if (claimed > items_left_) {
        return fail("a block of " + std::to_string(count) + " items at " + byte(start) +
                    ": more items in all than the message has bytes");
      }
      items_left_ -= claimed;
      for (std::int64_t i = 0; i < count; ++i, ++index) {
        std::string_view key;
        if (map && !bytes(key, "map key")) {
          path_.push_back("[" + std::to_string(index) + "]");
          return false;
        }
        if (!value(*node.items, depth + 1)) {
          path_.push_back(map ? "[\"" + std::string(key.substr(0, 64)) + "\"]" : "[" + std::to_string(index) + "]");
          return false;
        }
      }
    }
  }

  std::string with_path(const std::string& top) {
    path_.push_back(top);
    std::string path;
    for (auto it = path_.rbegin(); it != path_.rend(); ++it) {
      if (!path.empty() && it->front() != '[') path += '.';
      path += *it;
    }
    return "field " + path + ": " + message_;
  }

  const char* begin_;
  const char* at_;
  const char* end_;
  std::size_t items_left_;  // array and map items the rest of the message may still hold
  std::string message_;
  std::vector<std::string> path_;  // innermost first, filled on the way out of a failure
};

}  // namespace

std::optional<std::string> check_binary(const Node& root, std::string_view payload, std::vector<FieldBytes>& fields) {
  return Checker(payload).check(root, fields);
}

}  // namespace hbingest::event_formats::avro
