#pragma once
// Loading and validating the daemon's YAML config.
//
// One call reads the whole file and reports every problem at once: malformed YAML, unknown keys
// (with a "did you mean"), wrong types, out-of-range values, missing required keys, unresolvable
// ${ENV}/${file:PATH} substitutions and cross-field rules. Each problem is one line
// "path:line:col: key.path: message" (line and column 1-based).
//
// Substitution: in any scalar value, ${NAME} is replaced by the environment variable NAME and
// ${file:PATH} by the contents of PATH (one trailing newline stripped; relative paths are relative to
// the config file's directory). "$${" stands for a literal "${".
//
// Thread safety: the functions are reentrant; they read the environment and the file system.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "hbingest/config/config.h"

namespace hbingest::config {

// Throws ConfigError listing every problem (including "cannot read" for the file itself).
Config load_config(const std::filesystem::path& path);

// Same, for YAML text; `source_name` prefixes the problems and relative ${file:..}/key_file paths
// resolve against the current directory.
Config load_config_text(std::string_view yaml, std::string_view source_name);

// The non-throwing form behind both: `config` holds every value that could be read (defaults for
// the rest) and `problems` is empty when the file is valid. Lets `check-config` go on to validate
// the key specs of the routes that did load.
struct LoadResult {
  Config config;
  std::vector<std::string> problems;
};
LoadResult try_load_config(const std::filesystem::path& path);
LoadResult try_load_config_text(std::string_view yaml, std::string_view source_name);

// Every option with its effective value (defaults included) as YAML in the file's layout. Secrets
// (http.bearer_token, kafka/dlq properties whose name says password/secret/key/token/jaas) are
// printed as "***". Loading the output again yields the same Config, secrets aside.
std::string effective_config_yaml(const Config& config);

// The option reference (Markdown tables, one per section, generated from the schema): key, type,
// default, bounds, description. docs/configuration.md embeds it.
std::string configuration_reference_markdown();

}  // namespace hbingest::config
