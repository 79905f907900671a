#pragma once
// The declarative option tables: one Option per key with its type, bounds and description, plus a
// reader and a writer bound to a struct member. Defaults are the struct's own (config.h), so the
// reference, the effective config and the loader cannot disagree.

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hbingest/config/duration.h"
#include "hbingest/config/size.h"
#include "hbingest/support/did_you_mean.h"
#include "hbingest/support/secrets.h"
#include "reader.h"

namespace hbingest::config::detail {

using support::did_you_mean;

template <class S>
struct Option {
  Option(std::string key_, std::string type_, std::string bounds_, std::string description_, bool required_ = false)
      : key(std::move(key_)),
        type(std::move(type_)),
        bounds(std::move(bounds_)),
        description(std::move(description_)),
        required(required_) {}

  std::string key;
  std::string type;    // for the reference: "duration", "size", "integer", "string", ...
  std::string bounds;  // for the reference: "1..256", "one of: a, b"; empty when unbounded
  std::string description;
  bool required = false;
  // Reads the value node into the struct; records problems instead of throwing. `path` is the
  // key's full path ("writer.linger").
  std::function<void(S&, const YAML::Node&, const std::string& path, Reader&)> read;
  // The effective value (secrets redacted); nullopt leaves the key out (an input-only alias such
  // as http.token_file) .
  std::function<std::optional<YAML::Node>(const S&)> write;
};

template <class S>
using Options = std::vector<Option<S>>;

inline const std::string kRedacted(support::kRedacted);

// Reads a mapping against its option table: unknown keys (with a suggestion), duplicate keys and
// missing required keys become problems; every known key is remembered for cross-field messages.
template <class S>
void read_mapping(const YAML::Node& node, const std::string& path, const Options<S>& options, S& out, Reader& reader) {
  const auto child_path = [&](const std::string& key) { return path.empty() ? key : path + "." + key; };
  if (!node.IsMap()) {
    reader.problem(node.Mark(), path, "expected a mapping, got " + std::string(node_kind(node)));
    return;
  }
  std::vector<std::string> known;
  for (const auto& option : options) known.push_back(option.key);
  std::set<std::string> present;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) {
      reader.problem(entry.first.Mark(), path, "keys must be plain strings");
      continue;
    }
    const std::string key = entry.first.Scalar();
    if (!present.insert(key).second) {
      reader.problem(entry.first.Mark(), child_path(key), "duplicate key");
      continue;
    }
    const auto option = std::find_if(options.begin(), options.end(), [&](const auto& o) { return o.key == key; });
    if (option == options.end()) {
      reader.problem(entry.first.Mark(), child_path(key), "unknown key" + did_you_mean(key, known));
      continue;
    }
    reader.remember(child_path(key), entry.second.Mark());
    option->read(out, entry.second, child_path(key), reader);
  }
  for (const auto& option : options) {
    if (option.required && !present.contains(option.key)) {
      reader.problem(node.Mark(), child_path(option.key), "missing required key");
    }
  }
}

template <class S>
YAML::Node write_mapping(const S& in, const Options<S>& options) {
  YAML::Node node(YAML::NodeType::Map);
  for (const auto& option : options) {
    if (!option.write) continue;
    if (auto value = option.write(in)) node[option.key] = *value;
  }
  return node;
}

// ---- option factories -------------------------------------------------------------------------

template <class S, class T>
Option<S> integer(std::string key, T S::*member, std::int64_t min, std::int64_t max, std::string description) {
  Option<S> o{std::move(key), "integer", std::to_string(min) + ".." + std::to_string(max), std::move(description)};
  o.read = [=](S& s, const YAML::Node& node, const std::string& path, Reader& r) {
    const auto text = r.scalar(node, path, "an integer");
    if (!text) return;
    std::int64_t value = 0;
    const char* end = text->data() + text->size();
    auto [ptr, ec] = std::from_chars(text->data(), end, value);
    if (ec != std::errc{} || ptr != end) {
      r.problem(node.Mark(), path, "expected an integer, got " + r.shown(path, *text));
    } else if (value < min || value > max) {
      r.problem(node.Mark(), path,
                "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
                    r.shown(path, *text, false));
    } else {
      s.*member = static_cast<T>(value);
    }
  };
  o.write = [=](const S& s) -> std::optional<YAML::Node> { return YAML::Node(s.*member); };
  return o;
}

// An integer or the word `auto` (nullopt): the daemon derives the value from what it observes.
template <class S>
Option<S> integer_or_auto(std::string key, std::optional<std::size_t> S::*member, std::int64_t min, std::int64_t max,
                          std::string description) {
  Option<S> o{std::move(key), "integer or auto", std::to_string(min) + ".." + std::to_string(max) + ", or auto",
              std::move(description)};
  o.read = [=](S& s, const YAML::Node& node, const std::string& path, Reader& r) {
    const auto text = r.scalar(node, path, "an integer or auto");
    if (!text) return;
    if (*text == "auto") {
      s.*member = std::nullopt;
      return;
    }
    std::int64_t value = 0;
    const char* end = text->data() + text->size();
    auto [ptr, ec] = std::from_chars(text->data(), end, value);
    if (ec != std::errc{} || ptr != end) {
      r.problem(node.Mark(), path, "expected an integer or auto, got " + r.shown(path, *text));
    } else if (value < min || value > max) {
      r.problem(node.Mark(), path,
                "must be between " + std::to_string(min) + " and " + std::to_string(max) + " (or auto), got " +
                    r.shown(path, *text, false));
    } else {
      s.*member = static_cast<std::size_t>(value);
    }
  };
  o.write = [=](const S& s) -> std::optional<YAML::Node> {
    return (s.*member) ? YAML::Node(*(s.*member)) : YAML::Node("auto");
  };
  return o;
}

template <class S>
Option<S> size(std::string key, std::size_t S::*member, std::size_t min, std::size_t max, std::string description) {
  Option<S> o{std::move(key), "size", format_size(min) + ".." + format_size(max), std::move(description)};
  o.read = [=](S& s, const YAML::Node& node, const std::string& path, Reader& r) {
    const auto text = r.scalar(node, path, "a size");
    if (!text) return;
    try {
      const std::size_t value = parse_size(*text);
      if (value < min || value > max) {
        r.problem(node.Mark(), path,
                  "must be between " + format_size(min) + " and " + format_size(max) + ", got " +
                      r.shown(path, *text, false));
        return;
      }
      s.*member = value;
    } catch (const std::invalid_argument& e) {
      r.problem(node.Mark(), path, r.invalid(path, e.what(), "a size"));
    }
  };
  o.write = [=](const S& s) -> std::optional<YAML::Node> { return YAML::Node(format_size(s.*member)); };
  return o;
}

template <class S>
Option<S> duration(std::string key, std::chrono::milliseconds S::*member, std::chrono::milliseconds min,
                   std::chrono::milliseconds max, std::string description) {
  Option<S> o{std::move(key), "duration", format_duration(min) + ".." + format_duration(max), std::move(description)};
  o.read = [=](S& s, const YAML::Node& node, const std::string& path, Reader& r) {
    const auto text = r.scalar(node, path, "a duration");
    if (!text) return;
    try {
      const auto value = parse_duration(*text);
      if (value < min || value > max) {
        r.problem(node.Mark(), path,
                  "must be between " + format_duration(min) + " and " + format_duration(max) + ", got " +
                      r.shown(path, *text, false));
        return;
      }
      s.*member = value;
    } catch (const std::invalid_argument& e) {
      r.problem(node.Mark(), path, r.invalid(path, e.what(), "a duration"));
    }
  };
  o.write = [=](const S& s) -> std::optional<YAML::Node> { return YAML::Node(format_duration(s.*member)); };
  return o;
}

std::optional<bool> parse_bool(const std::string& text);

template <class S>
Option<S> boolean(std::string key, bool S::*member, std::string description) {
  Option<S> o{std::move(key), "bool", "", std::move(description)};
  o.read = [=](S& s, const YAML::Node& node, const std::string& path, Reader& r) {
    const auto text = r.scalar(node, path, "true or false");
    if (!text) return;
    if (const auto value = parse_bool(*text)) {
      s.*member = *value;
    } else {
      r.problem(node.Mark(), path, "expected true or false, got " + r.shown(path, *text));
    }
  };
  o.write = [=](const S& s) -> std::optional<YAML::Node> { return YAML::Node(s.*member); };
  return o;
}

std::string join(const std::vector<std::string>& items, std::string_view separator);

// A string; `allowed` (when not empty) lists the only accepted values.
template <class S>
Option<S> string(std::string key, std::string S::*member, std::string description,
                 std::vector<std::string> allowed = {}, bool required = false) {
  Option<S> o{std::move(key), "string", allowed.empty() ? "non-empty" : "one of: " + join(allowed, ", "),
              std::move(description), required};
  o.read = [=](S& s, const YAML::Node& node, const std::string& path, Reader& r) {
    const auto text = r.scalar(node, path, "a string");
    if (!text) return;
    if (text->empty()) {
      r.problem(node.Mark(), path, "must not be empty");
    } else if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), *text) == allowed.end()) {
      r.problem(node.Mark(), path,
                r.shown(path, *text) + " is not one of " + join(allowed, ", ") + did_you_mean(*text, allowed));
    } else {
      s.*member = *text;
    }
  };
  o.write = [=](const S& s) -> std::optional<YAML::Node> { return YAML::Node(s.*member); };
  return o;
}

template <class S>
Option<S> optional_string(std::string key, std::optional<std::string> S::*member, std::string description) {
  Option<S> o{std::move(key), "string", "optional", std::move(description)};
  o.read = [=](S& s, const YAML::Node& node, const std::string& path, Reader& r) {
    if (node.IsNull()) return;  // "key: ~" says "unset" explicitly
    const auto text = r.scalar(node, path, "a string");
    if (!text) return;
    if (text->empty()) {
      r.problem(node.Mark(), path, "must not be empty (leave the key out to unset it)");
    } else {
      s.*member = *text;
    }
  };
  o.write = [=](const S& s) -> std::optional<YAML::Node> {
    return (s.*member) ? YAML::Node(*(s.*member)) : YAML::Node(YAML::NodeType::Null);
  };
  return o;
}

// The value named `text` among `values`; nullopt after recording the problem.
template <class E>
std::optional<E> enum_value(const std::vector<std::pair<std::string, E>>& values, const std::vector<std::string>& names,
                            const YAML::Node& node, const std::string& path, Reader& r) {
  const auto text = r.scalar(node, path, "one of " + join(names, ", "));
  if (!text) return std::nullopt;
  for (const auto& [name, value] : values) {
    if (name == *text) return value;
  }
  r.problem(node.Mark(), path,
            r.shown(path, *text) + " is not one of " + join(names, ", ") + did_you_mean(*text, names));
  return std::nullopt;
}

template <class E>
YAML::Node enum_name(const std::vector<std::pair<std::string, E>>& values, E value) {
  for (const auto& [name, v] : values) {
    if (v == value) return YAML::Node(name);
  }
  return YAML::Node("?");
}

template <class E>
std::vector<std::string> enum_names(const std::vector<std::pair<std::string, E>>& values) {
  std::vector<std::string> names;
  for (const auto& v : values) names.push_back(v.first);
  return names;
}

template <class S, class E>
Option<S> enumeration(std::string key, E S::*member, std::vector<std::pair<std::string, E>> values,
                      std::string description) {
  const auto names = enum_names(values);
  Option<S> o{std::move(key), "enum", "one of: " + join(names, ", "), std::move(description)};
  o.read = [=](S& s, const YAML::Node& node, const std::string& path, Reader& r) {
    if (const auto value = enum_value(values, names, node, path, r)) s.*member = *value;
  };
  o.write = [=](const S& s) -> std::optional<YAML::Node> { return enum_name(values, s.*member); };
  return o;
}

// An enumeration that may be left unset (a route's override of a decode default).
template <class S, class E>
Option<S> optional_enumeration(std::string key, std::optional<E> S::*member,
                               std::vector<std::pair<std::string, E>> values, std::string description) {
  const auto names = enum_names(values);
  Option<S> o{std::move(key), "enum", "optional; one of: " + join(names, ", "), std::move(description)};
  o.read = [=](S& s, const YAML::Node& node, const std::string& path, Reader& r) {
    if (node.IsNull()) return;
    if (const auto value = enum_value(values, names, node, path, r)) s.*member = *value;
  };
  o.write = [=](const S& s) -> std::optional<YAML::Node> {
    return (s.*member) ? enum_name(values, *(s.*member)) : YAML::Node(YAML::NodeType::Null);
  };
  return o;
}

template <class S>
Option<S> string_list(std::string key, std::vector<std::string> S::*member, std::string description,
                      bool required = false) {
  Option<S> o{std::move(key), "list of strings", required ? "at least one" : "", std::move(description), required};
  o.read = [=](S& s, const YAML::Node& node, const std::string& path, Reader& r) {
    if (!node.IsSequence()) {
      r.problem(node.Mark(), path, "expected a sequence of strings, got " + std::string(node_kind(node)));
      return;
    }
    std::vector<std::string> items;
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string item_path = path + "[" + std::to_string(i) + "]";
      const auto text = r.scalar(node[i], item_path, "a string");
      if (!text) continue;
      if (text->empty()) {
        r.problem(node[i].Mark(), item_path, "must not be empty");
        continue;
      }
      items.push_back(*text);
    }
    if (required && node.size() == 0) r.problem(node.Mark(), path, "must list at least one entry");
    s.*member = std::move(items);
  };
  o.write = [=](const S& s) -> std::optional<YAML::Node> {
    YAML::Node list(YAML::NodeType::Sequence);
    for (const auto& item : s.*member) list.push_back(item);
    return list;
  };
  return o;
}

template <class S, class Map>
Option<S> string_map(std::string key, Map S::*member, std::string description) {
  Option<S> o{std::move(key), "map of strings", "", std::move(description)};
  o.read = [=](S& s, const YAML::Node& node, const std::string& path, Reader& r) {
    if (node.IsNull()) return;
    if (!node.IsMap()) {
      r.problem(node.Mark(), path, "expected a mapping of strings, got " + std::string(node_kind(node)));
      return;
    }
    for (const auto& entry : node) {
      const std::string name = entry.first.Scalar();
      const std::string item_path = path + "." + name;
      r.remember(item_path, entry.second.Mark());
      if (const auto text = r.scalar(entry.second, item_path, "a string")) {
        if (!(s.*member).emplace(name, *text).second) r.problem(entry.first.Mark(), item_path, "duplicate key");
      }
    }
  };
  o.write = [=](const S& s) -> std::optional<YAML::Node> {
    YAML::Node map(YAML::NodeType::Map);
    for (const auto& [name, value] : s.*member) map[name] = support::is_secret_key(name) ? kRedacted : value;
    return map;
  };
  return o;
}

}  // namespace hbingest::config::detail
