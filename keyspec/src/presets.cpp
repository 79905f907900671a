#include "presets.h"

#include <algorithm>

#include "hbingest/keyspec/key_spec.h"

namespace hbingest::keyspec::detail {
namespace {

struct Preset {
  std::string_view name;
  std::string_view yaml;  // ${param} placeholders
  std::map<std::string, std::string, std::less<>> defaults;
};

// Keep in step with docs/keyspec.md "Presets".
const std::vector<Preset>& presets() {
  static const std::vector<Preset> kPresets = {
      {"events",
       R"(name: events
event_component: event
time_component: time
components:
  - {name: salt, type: salt, buckets: ${buckets}, of: [kafka:partition, kafka:offset]}
  - {name: event, type: field, field: "${event_field}", width: ${event_width}, pad: "\x01"}
  - {name: time, type: time, field: "${time_field}", input: ${time_input}, format: yyyyMMddHHmmssSSS}
  - {name: partition, type: partition, width: 4}
  - {name: offset, type: offset, width: 19}
)",
       {{"buckets", "100"},
        {"event_field", "event_id"},
        {"event_width", "16"},
        {"time_field", "ts"},
        {"time_input", "auto"}}},
      // `events` for subscriptions that deliver several topics: a 4-byte xxh64 of the topic before the
      // partition keeps records of two topics apart (app/key_uniqueness.h refuses `events` there).
      {"events_by_topic",
       R"(name: events_by_topic
event_component: event
time_component: time
components:
  - {name: salt, type: salt, buckets: ${buckets}, of: [kafka:partition, kafka:offset]}
  - {name: event, type: field, field: "${event_field}", width: ${event_width}, pad: "\x01"}
  - {name: time, type: time, field: "${time_field}", input: ${time_input}, format: yyyyMMddHHmmssSSS}
  - {name: topic, type: hash, of: [kafka:topic], algorithm: xxh64, bytes: 4}
  - {name: partition, type: partition, width: 4}
  - {name: offset, type: offset, width: 19}
)",
       {{"buckets", "100"},
        {"event_field", "event_id"},
        {"event_width", "16"},
        {"time_field", "ts"},
        {"time_input", "auto"}}},
      {"order_status",
       R"(name: order_status
components:
  - {name: order, type: reverse, field: "${order_field}", width: ${order_width}}
  - {name: time, type: time, field: "${time_field}", input: ${time_input}, reversed: true, format: binary}
)",
       {{"order_field", "order_id"}, {"order_width", "16"}, {"time_field", "ts"}, {"time_input", "auto"}}},
      {"user_history",
       R"(name: user_history
components:
  - {name: user, type: reverse, field: "${user_field}", width: ${user_width}}
  - {name: time, type: time, field: "${time_field}", input: ${time_input}, reversed: true, format: binary}
)",
       {{"user_field", "user_id"}, {"user_width", "12"}, {"time_field", "ts"}, {"time_input", "auto"}}},
      {"timeline",
       R"(name: timeline
components:
  - {name: user, type: hash, field: "${user_field}", algorithm: md5}
  - {name: time, type: time, field: "${time_field}", input: ${time_input}, reversed: true, format: binary}
)",
       {{"user_field", "user"}, {"time_field", "ts"}, {"time_input", "auto"}}},
      {"follows",
       R"(name: follows
components:
  - {name: a, type: hash, field: "${a_field}", algorithm: md5}
  - {name: b, type: hash, field: "${b_field}", algorithm: md5}
)",
       {{"a_field", "user"}, {"b_field", "follows"}}},
      {"consumption",
       R"(name: consumption
components:
  - {name: region, type: salt, buckets: ${buckets}, width: 3, of: ["field:${user_field}"], month_of: "field:${time_field}", input: ${time_input}}
  - {name: month, type: time, field: "${time_field}", input: ${time_input}, format: yyyy-MM}
  - {name: user, type: field, field: "${user_field}", width: ${user_width}, pad: "\x01", align: right}
  - {name: day, type: time, field: "${time_field}", input: ${time_input}, format: "-dd HH:mm:ss SSS"}
)",
       {{"buckets", "10"}, {"user_field", "user"}, {"user_width", "10"}, {"time_field", "ts"}, {"time_input", "auto"}}},
      {"logs",
       R"(name: logs
event_component: event
components:
  - {name: bucket, type: bucket, field: "${time_field}", input: ${time_input}, buckets: ${buckets}}
  - {name: time, type: time, field: "${time_field}", input: ${time_input}, format: binary}
  - {name: host, type: field, field: "${host_field}", terminator: "\0"}
  - {name: event, type: field, field: "${event_field}", terminator: "\0"}
)",
       {{"buckets", "16"},
        {"time_field", "ts"},
        {"time_input", "auto"},
        {"host_field", "host"},
        {"event_field", "event"}}},
      {"logs_fixed",
       R"(name: logs_fixed
components:
  - {name: host, type: hash, field: "${host_field}", algorithm: md5}
  - {name: event, type: hash, field: "${event_field}", algorithm: md5}
  - {name: time, type: time, field: "${time_field}", input: ${time_input}, format: binary}
)",
       {{"time_field", "ts"}, {"time_input", "auto"}, {"host_field", "host"}, {"event_field", "event"}}},
  };
  return kPresets;
}

bool plain(std::string_view v) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  });
}

}  // namespace

std::string preset_yaml(std::string_view name, const std::map<std::string, std::string, std::less<>>& params) {
  const auto& all = presets();
  const auto it = std::find_if(all.begin(), all.end(), [&](const Preset& p) { return p.name == name; });
  const std::string source = "preset:" + std::string(name);
  if (it == all.end()) {
    std::string known;
    for (const auto& p : all) known.append(known.empty() ? "" : ", ").append(p.name);
    throw SpecError(source + ": unknown preset (known: " + known + ")");
  }
  auto values = it->defaults;
  for (const auto& [key, value] : params) {
    const auto d = values.find(key);
    if (d == values.end()) {
      std::string known;
      for (const auto& [k, v] : it->defaults) known.append(known.empty() ? "" : ", ").append(k);
      throw SpecError(source + ": unknown parameter '" + key + "' (known: " + known + ")");
    }
    // Values are pasted into YAML: a plain word keeps a parameter from injecting structure.
    if (!plain(value))
      throw SpecError(source + ": parameter '" + key + "' must be a plain word or number, got '" + value + "'");
    d->second = value;
  }
  std::string yaml(it->yaml);
  for (const auto& [key, value] : values) {
    const std::string token = "${" + key + "}";
    for (auto pos = yaml.find(token); pos != std::string::npos; pos = yaml.find(token, pos + value.size())) {
      yaml.replace(pos, token.size(), value);
    }
  }
  return yaml;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& p : presets()) names.emplace_back(p.name);
  return names;
}

}  // namespace hbingest::keyspec::detail
