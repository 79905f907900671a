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
// Secrets never appear in a problem: a message about a value read through ${...} names the
// reference, not the value, and every message is scrubbed of the secrets resolved (Config::secrets).
// Loading registers those secrets process-wide (support::register_secrets) for the log scrubber.
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
//
// `warnings` lists settings that load but weaken a guarantee (same "path:line:col: key: message"
// form): auto.offset.reset latest, dead-letter acks other than all, SASL PLAIN without TLS, broker
// certificate or host name checks off, an HTTP port reachable from other machines without a token,
// a secret too short to scrub. check-config prints them; run and serve log them at warn.
struct LoadResult {
  Config config;
  std::vector<std::string> problems;
  std::vector<std::string> warnings;
};
LoadResult try_load_config(const std::filesystem::path& path);
LoadResult try_load_config_text(std::string_view yaml, std::string_view source_name);

// Every option with its effective value (defaults included) as YAML in the file's layout. Secrets
// are printed as "***": secret keys (support::is_secret_key: http.bearer_token, kafka/dlq
// properties such as sasl.password, ssl.key.pem, sasl.oauthbearer.extensions) and any value holding
// one of config.secrets (a ${file:} read into any key). Loading the output again yields the same
// Config, secrets aside.
std::string effective_config_yaml(const Config& config);

// The option reference (Markdown tables, one per section, generated from the schema): key, type,
// default, bounds, description. docs/configuration.md embeds it.
std::string configuration_reference_markdown();

}  // namespace hbingest::config
