#pragma once
// Test helper: .proto text → FileDescriptorProto, with libprotoc as the format does not use it: no
// error collector (the tests' schemas are valid, and the tokenizer calls its collector only on an
// error), so the format's wrapper stays the one implementation of that interface.

#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <stdexcept>
#include <string>

namespace hbingest::testing {

inline google::protobuf::FileDescriptorProto parse_text(const std::string& text, const std::string& name) {
  google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  google::protobuf::io::Tokenizer tokenizer(&input, nullptr);
  google::protobuf::compiler::Parser parser;
  google::protobuf::FileDescriptorProto file;
  if (!parser.Parse(&tokenizer, &file)) throw std::runtime_error("test schema does not parse: " + name);
  file.set_name(name);
  return file;
}

}  // namespace hbingest::testing
