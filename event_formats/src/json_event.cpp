#include "hbingest/event_formats/json_event.h"

#include <simdjson.h>

#include "cell_text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace hbingest::event_formats {

using keyspec::FieldValue;
using keyspec::NestedValue;
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

FieldValue value_of(const element& value) {
  switch (value.type()) {
    case element_type::STRING:
      return std::string_view(value.get_string().value_unsafe());
    case element_type::INT64:
      return value.get_int64().value_unsafe();
    case element_type::UINT64:
      return static_cast<double>(value.get_uint64().value_unsafe());
    case element_type::DOUBLE:
      return value.get_double().value_unsafe();
    case element_type::BOOL:
      return value.get_bool().value_unsafe();
    case element_type::NULL_VALUE:
      return std::monostate{};
    case element_type::ARRAY:
    case element_type::OBJECT:
      return NestedValue{};
  }
  return std::monostate{};
}

// Documents up to this size leave their parser buffers to the next event; larger ones do not (parse).
constexpr std::size_t kKeptDocumentBytes = 64 * 1024;

}  // namespace

struct JsonEvent::Impl {
  struct Member {
    std::string_view name;
    element value;
  };
  simdjson::dom::parser parser;
  std::vector<Member> members;  // capacity kept between events
  // append_text's minifier for objects and arrays, its buffer kept between values.
  std::optional<simdjson::internal::string_builder<CellTextFormatter>> minifier{std::in_place};

  // The parsed value at `path`, nullopt when a step finds nothing.
  std::optional<element> walk(const FieldPath& path) const;
  // A value as append_text writes a member.
  void append_value_text(const element& value, std::string& out);
};

JsonEvent::JsonEvent() : impl_(std::make_unique<Impl>()) {}
JsonEvent::~JsonEvent() = default;

std::optional<JsonEvent::ParseFailure> JsonEvent::parse(std::string_view json) {
  // simdjson keeps its buffers for the next document, at ~16 times the size of the largest it has
  // read (an 8 MiB event: 124 MiB), and the members and the minifier's buffer grow with an event
  // too. So one large event would leave that much held by the decoder for every event after it:
  // when a document above kKeptDocumentBytes was read and this one is not, all three are given
  // back and sized afresh for this one. Events of every size above it still reuse the buffers.
  if (impl_->parser.capacity() > kKeptDocumentBytes && json.size() <= kKeptDocumentBytes) {
    impl_->parser = simdjson::dom::parser{};
    // New ones: assigning empty ones (`members = {}`, an empty string) would keep their capacity.
    std::vector<Impl::Member>().swap(impl_->members);
    impl_->minifier.emplace();
  }
  impl_->members.clear();
  // An empty view may have no data at all (a Kafka message without a value), which simdjson
  // would copy from: it gets a pointer to no bytes.
  static constexpr char kNoBytes[] = "";
  if (json.data() == nullptr) json = std::string_view(kNoBytes);
  element document;
  if (const auto error = impl_->parser.parse(json.data(), json.size()).get(document); error != simdjson::SUCCESS) {
    return ParseFailure{false, std::string("not valid JSON: ") + simdjson::error_message(error)};
  }
  simdjson::dom::object object;
  if (document.get_object().get(object) != simdjson::SUCCESS) return ParseFailure{true, "not a JSON object"};
  for (const auto member : object) impl_->members.push_back({member.key, member.value});
  return std::nullopt;
}

std::optional<FieldValue> JsonEvent::field(std::string_view name) const {
  const auto& members = impl_->members;
  for (auto it = members.rbegin(); it != members.rend(); ++it) {  // the last of a repeated name wins
    if (it->name == name) return value_of(it->value);
  }
  return std::nullopt;
}

std::size_t JsonEvent::member_count() const { return impl_->members.size(); }
std::string_view JsonEvent::member_name(std::size_t i) const { return impl_->members.at(i).name; }
FieldValue JsonEvent::member_value(std::size_t i) const { return value_of(impl_->members.at(i).value); }
bool JsonEvent::member_is_null(std::size_t i) const { return impl_->members.at(i).value.is_null(); }

void JsonEvent::append_text(std::size_t i, std::string& out) const {
  impl_->append_value_text(impl_->members.at(i).value, out);
}

void JsonEvent::Impl::append_value_text(const element& value, std::string& out) {
  char buffer[32];
  const auto append_number = [&](auto number) {
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), number);
    out.append(buffer, result.ptr);
  };
  switch (value.type()) {
    case element_type::STRING:
      out.append(std::string_view(value.get_string().value_unsafe()));
      return;
    case element_type::INT64:
      append_number(value.get_int64().value_unsafe());
      return;
    case element_type::UINT64:
      append_number(value.get_uint64().value_unsafe());
      return;
    case element_type::DOUBLE:
      append_double(value.get_double().value_unsafe(), out);
      return;
    case element_type::BOOL:
      out.append(value.get_bool().value_unsafe() ? "true" : "false");
      return;
    case element_type::NULL_VALUE:
      return;
    case element_type::ARRAY:
    case element_type::OBJECT: {
      // What simdjson::minify(value) does, with one builder kept between values: minify() builds
      // in a fresh buffer and copies it into a new string, ~9 allocations for an order's items.
      // The builder's own formatter is replaced with CellTextFormatter (same bytes, fewer steps).
      auto& builder = *minifier;
      builder.clear();
      builder.append(value);
      out.append(builder.str());
      return;
    }
  }
}

// One loop over the steps, no recursion: each step looks at one object's members or one array's
// elements, which simdjson's tape lets it pass over without entering them, so a path costs the
// members it passes, however deep the document nests.
std::optional<element> JsonEvent::Impl::walk(const FieldPath& path) const {
  if (path.steps.empty() || path.steps.front().index) return std::nullopt;
  const std::string_view first = path.steps.front().name;
  std::optional<element> at;
  for (auto it = members.rbegin(); it != members.rend(); ++it) {  // the last of a repeated name wins
    if (it->name == first) {
      at = it->value;
      break;
    }
  }
  for (std::size_t s = 1; s < path.steps.size() && at; ++s) {
    const PathStep& step = path.steps[s];
    if (step.index) {
      simdjson::dom::array array;
      element item;
      if (at->get_array().get(array) != simdjson::SUCCESS || array.at(*step.index).get(item) != simdjson::SUCCESS) {
        return std::nullopt;
      }
      at = item;
      continue;
    }
    simdjson::dom::object object;
    if (at->get_object().get(object) != simdjson::SUCCESS) return std::nullopt;
    std::optional<element> found;
    for (const auto member : object) {
      if (member.key == step.name) found = member.value;  // the last of a repeated name wins
    }
    at = found;
  }
  return at;
}

std::optional<FieldValue> JsonEvent::at(const FieldPath& path) const {
  if (path.is_top_level()) return field(path.steps.front().name);
  const auto value = impl_->walk(path);
  if (!value) return std::nullopt;
  return value_of(*value);
}

bool JsonEvent::append_text_at(const FieldPath& path, std::string& out) const {
  const auto value = impl_->walk(path);
  if (!value) return false;
  impl_->append_value_text(*value, out);
  return true;
}

bool JsonEvent::visit_members(const FieldPath& path, MemberVisitor& visit) const {
  if (path.steps.empty()) return Record::visit_members(path, visit);
  const auto value = impl_->walk(path);
  simdjson::dom::object object;
  if (!value || value->get_object().get(object) != simdjson::SUCCESS) return false;
  for (const auto member : object) {
    visit.member(member.key, value_of(member.value), member.value.is_null(),
                 [&](std::string& out) { impl_->append_value_text(member.value, out); });
  }
  return true;
}

}  // namespace hbingest::event_formats
