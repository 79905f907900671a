// The converter of format_events.h on the command line, for bench/compare.sh's Avro run (a Python
// producer registers the schemas and writes the bytes to Kafka):
//
//   format_events_tool schema avro|protobuf login|order      the schema's text on stdout
//   format_events_tool convert avro|protobuf|json_schema LOGIN_ID ORDER_ID
//       stdin: generated JSON events, one per line; stdout: each one's framed value in hex, one per line
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "format_events.h"

namespace {

using hbingest::bench::Format;

Format format_named(std::string_view name) {
  for (const auto format : {Format::json, Format::json_schema, Format::avro, Format::protobuf}) {
    if (hbingest::bench::to_string(format) == name) return format;
  }
  throw std::invalid_argument("unknown format '" + std::string(name) + "'");
}

int usage() {
  std::cerr << "usage: format_events_tool schema avro|protobuf login|order\n"
               "       format_events_tool convert avro|protobuf|json_schema LOGIN_ID ORDER_ID < events.jsonl\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 4) return usage();
  const std::string_view command = argv[1];
  const Format format = format_named(argv[2]);
  if (command == "schema") {
    const bool order = std::string_view(argv[3]) == "order";
    std::cout << (format == Format::avro ? hbingest::bench::avro_schema_text(order)
                                         : hbingest::bench::protobuf_schema_text(order));
    return 0;
  }
  if (command != "convert" || argc != 5) return usage();
  const hbingest::bench::SchemaIds ids{std::stoi(argv[3]), std::stoi(argv[4])};
  const hbingest::bench::FormatEvents events;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string line;
  std::string out;
  while (std::getline(std::cin, line)) {
    const std::string framed = events.convert(line, format, ids);
    out.clear();
    for (const char c : framed) {
      out += kHex[(static_cast<unsigned char>(c) >> 4) & 0xF];
      out += kHex[static_cast<unsigned char>(c) & 0xF];
    }
    out += '\n';
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "format_events_tool: " << e.what() << "\n";
  return 1;
}
