#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "hbingest/config/loader.h"
#include "hbingest/support/secrets.h"
#include "reader.h"
#include "sanity_check.h"
#include "sections.h"
#include "unsafe_settings.h"

namespace hbingest::config {

namespace {

LoadResult load_text(std::string_view yaml, std::string source_name, std::filesystem::path base_dir) {
  LoadResult result;
  detail::Reader reader(std::move(source_name), std::move(base_dir));
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    // Malformed YAML: nothing below can be trusted, so this is the only problem reported.
    reader.problem(e.mark, "", "malformed YAML: " + e.msg);
    result.problems = reader.take_problems();
    return result;
  }
  if (root.IsNull()) {
    YAML::Mark top;
    reader.problem(top, "", "the config is empty; it needs at least kafka, hbase and routes");
  } else {
    detail::read_mapping(root, "", detail::config_options(), result.config, reader);
    if (root.IsMap()) {
      detail::sanity_check(result.config, reader);
      detail::warn_unsafe_settings(result.config, reader);
    }
  }
  result.problems = reader.take_problems();
  result.warnings = reader.take_warnings();
  result.config.secrets = reader.take_secrets();
  support::register_secrets(result.config.secrets);
  return result;
}

Config or_throw(LoadResult result) {
  if (!result.problems.empty()) throw ConfigError(std::move(result.problems));
  return std::move(result.config);
}

}  // namespace

LoadResult try_load_config_text(std::string_view yaml, std::string_view source_name) {
  return load_text(yaml, std::string(source_name), std::filesystem::current_path());
}

LoadResult try_load_config(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || in.bad()) {
    LoadResult result;
    result.problems.push_back(path.string() + ": cannot read the config file: " + std::strerror(errno));
    return result;
  }
  const std::filesystem::path base_dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  LoadResult result = load_text(text.str(), path.string(), base_dir);
  result.config.source = path;
  return result;
}

Config load_config(const std::filesystem::path& path) { return or_throw(try_load_config(path)); }

Config load_config_text(std::string_view yaml, std::string_view source_name) {
  Config config = or_throw(try_load_config_text(yaml, source_name));
  config.source = std::filesystem::path(source_name);
  return config;
}

}  // namespace hbingest::config
