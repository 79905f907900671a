#pragma once
// One function per `hbingest` subcommand. Each takes the arguments after the subcommand name and
// returns the process exit code. Implemented in daemon/app/src/commands/<name>_command.cpp.

#include <string>
#include <vector>

namespace hbingest::app {

using Args = std::vector<std::string>;

int run_command(const Args& args);              // hbingest run --config FILE
int serve_command(const Args& args);            // hbingest serve --config FILE (read-only query server)
int query_command(const Args& args);            // hbingest query --config FILE --event-id ...
int key_command(const Args& args);              // hbingest key build|explain|plan ...
int check_config_command(const Args& args);     // hbingest check-config FILE [--print-effective]
int bootstrap_command(const Args& args);        // hbingest bootstrap --config FILE
int gen_command(const Args& args);              // hbingest gen --brokers B --topic T --rate R --count N
int metrics_catalog_command(const Args& args);  // hbingest metrics-catalog (every metric family, no stack)

}  // namespace hbingest::app
