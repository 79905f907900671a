#include "hbingest/keyspec/key_spec.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "component_codec.h"
#include "presets.h"
#include "scan_planner.h"
#include "spec_loader.h"
#include "spec_model.h"

namespace hbingest::keyspec {

struct KeySpec::Impl {
  detail::SpecModel model;
};

namespace {

// Start of component `index` in `key`: direct when every component before it is fixed-width,
// otherwise by walking the variable ones. Throws DecodeError on a malformed key.
std::size_t locate(const detail::SpecModel& m, std::string_view key, std::size_t index) {
  if (m.fixed_offset[index]) return *m.fixed_offset[index];
  std::size_t i = index;
  while (!m.fixed_offset[i]) --i;
  std::size_t pos = *m.fixed_offset[i];
  for (; i < index; ++i) pos += detail::component_extent(m.components[i], key, pos);
  return pos;
}

std::int64_t number_at(const detail::SpecModel& m, std::string_view key, std::size_t index) {
  const detail::Component& c = m.components[index];
  const std::size_t pos = locate(m, key, index);
  const std::size_t n = detail::component_extent(c, key, pos);
  const auto v = detail::decode_number(c, key.substr(pos, n));
  if (!v) throw DecodeError("key component '" + c.name + "' at byte " + std::to_string(pos) + ": not a valid value");
  return *v;
}

}  // namespace

std::string to_hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (const char ch : bytes) {
    const auto u = static_cast<unsigned char>(ch);
    s.push_back(kHex[u >> 4]);
    s.push_back(kHex[u & 15]);
  }
  return s;
}

namespace {

std::string one_per_line(const std::vector<std::string>& problems) {
  std::string text;
  for (const auto& p : problems) {
    if (!text.empty()) text += '\n';
    text += p;
  }
  return text;
}

}  // namespace

SpecError::SpecError(const std::string& problem)
    : std::runtime_error(problem), problems_(std::make_shared<const std::vector<std::string>>(1, problem)) {}

SpecError::SpecError(std::vector<std::string> problems)
    : std::runtime_error(one_per_line(problems)),
      problems_(std::make_shared<const std::vector<std::string>>(std::move(problems))) {}

std::string KeyError::message() const {
  std::string s = "key component '" + component + "'";
  if (!field.empty()) s += " (field '" + field + "')";
  return s + ": " + reason;
}

KeySpec::KeySpec(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
KeySpec::KeySpec(const KeySpec&) = default;
KeySpec& KeySpec::operator=(const KeySpec&) = default;
KeySpec::KeySpec(KeySpec&&) noexcept = default;
KeySpec& KeySpec::operator=(KeySpec&&) noexcept = default;
KeySpec::~KeySpec() = default;

KeySpec KeySpec::from_yaml_text(std::string_view yaml, std::string_view source_name) {
  return KeySpec(std::make_shared<const Impl>(Impl{detail::load_spec_text(yaml, source_name)}));
}

KeySpec KeySpec::from_yaml_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError(path.string() + ": cannot open key spec file");
  std::ostringstream text;
  text << in.rdbuf();
  return from_yaml_text(text.str(), path.string());
}

KeySpec KeySpec::from_yaml_node(const YAML::Node& node, std::string_view source_name) {
  return KeySpec(std::make_shared<const Impl>(Impl{detail::load_spec(node, source_name)}));
}

KeySpec KeySpec::preset(std::string_view name, const std::map<std::string, std::string, std::less<>>& params) {
  return from_yaml_text(detail::preset_yaml(name, params), "preset:" + std::string(name));
}

std::vector<std::string> KeySpec::preset_names() { return detail::preset_names(); }

std::optional<KeyError> KeySpec::encode(const EventFields& event, const KafkaMeta& meta, std::string& out) const {
  out.clear();
  for (const auto& c : impl_->model.components) {
    if (auto err = detail::encode_component(c, event, meta, out)) return err;
  }
  if (out.size() > impl_->model.max_key_length) {
    return KeyError{"(key)", "",
                    "key length " + std::to_string(out.size()) + " exceeds max_key_length " +
                        std::to_string(impl_->model.max_key_length)};
  }
  return std::nullopt;
}

std::vector<KeyPart> KeySpec::decode(std::string_view key) const {
  const auto& m = impl_->model;
  std::vector<KeyPart> parts;
  parts.reserve(m.components.size());
  std::size_t pos = 0;
  for (const auto& c : m.components) {
    const std::size_t n = detail::component_extent(c, key, pos);
    parts.push_back(detail::decode_component(c, key, pos, pos + n));
    pos += n;
  }
  if (pos != key.size()) {
    throw DecodeError(std::to_string(key.size() - pos) + " trailing bytes after the last component at byte " +
                      std::to_string(pos));
  }
  return parts;
}

std::optional<SortKey> KeySpec::sort_key(std::string_view key) const {
  const auto& m = impl_->model;
  if (!m.time_index) return std::nullopt;
  SortKey k;
  k.time_ms = number_at(m, key, *m.time_index);
  if (m.partition_index) k.partition = static_cast<std::int32_t>(number_at(m, key, *m.partition_index));
  if (m.offset_index) k.offset = number_at(m, key, *m.offset_index);
  return k;
}

std::optional<std::string_view> KeySpec::merge_bytes(std::string_view key) const {
  const auto& m = impl_->model;
  if (!m.time_index) return std::nullopt;
  // Validates the time's bytes (and that the key reaches them) before handing out the tail.
  (void)number_at(m, key, *m.time_index);
  return key.substr(locate(m, key, *m.time_index));
}

bool KeySpec::time_descending() const {
  const auto& m = impl_->model;
  return m.time_index && std::get<detail::TimeSpec>(m.components[*m.time_index].shape).reversed;
}

std::vector<ScanRange> KeySpec::plan(const PlanRequest& request) const {
  return detail::plan_scan(impl_->model, request);
}

std::vector<ScanRange> KeySpec::plan_full_table(int splits) const {
  return detail::plan_full_table(impl_->model, splits);
}

std::vector<std::string> KeySpec::split_keys() const { return detail::split_keys(impl_->model); }

int KeySpec::salt_buckets() const {
  const auto& m = impl_->model;
  return m.has_lead ? static_cast<int>(detail::lead_values(m.components[0])) : 1;
}

std::optional<int> KeySpec::lead_bucket(std::string_view key) const {
  const auto& m = impl_->model;
  if (!m.has_lead) return std::nullopt;
  return static_cast<int>(number_at(m, key, 0));
}

std::size_t KeySpec::max_key_length() const { return impl_->model.max_key_length; }

const std::vector<ComponentInfo>& KeySpec::components() const { return impl_->model.infos; }

std::optional<std::string> KeySpec::event_component() const {
  const auto& m = impl_->model;
  if (!m.event_index) return std::nullopt;
  return m.components[*m.event_index].name;
}

std::optional<std::string> KeySpec::time_component() const {
  const auto& m = impl_->model;
  if (!m.time_index) return std::nullopt;
  return m.components[*m.time_index].name;
}

const std::vector<std::string>& KeySpec::warnings() const { return impl_->model.warnings; }

std::string_view KeySpec::source_name() const { return impl_->model.source_name; }

}  // namespace hbingest::keyspec
