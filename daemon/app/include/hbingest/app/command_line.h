#pragma once
// Subcommand argument parsing with CLI11: one place that turns --help and usage errors into the
// exit codes every subcommand uses (0 for --help, 2 for a usage error).

#include <CLI/CLI.hpp>
#include <optional>

#include "hbingest/app/commands.h"

namespace hbingest::app {

// Parses `args` (without the subcommand name). Returns an exit code when the command should stop
// now (help printed, or a usage error printed), nullopt to go on.
inline std::optional<int> parse_command_line(CLI::App& app, const Args& args) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last-first
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help (code 0) or the usage error
    return code == 0 ? 0 : 2;
  }
  return std::nullopt;
}

}  // namespace hbingest::app
