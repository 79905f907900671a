// hbingest: the one binary. main only dispatches to subcommands; everything else lives in
// libraries that the tests link.

#include <csignal>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "hbingest/app/commands.h"
#include "hbingest/app/version.h"
#include "hbingest/support/secrets.h"

namespace {

struct Subcommand {
  std::string_view name;
  int (*run)(const hbingest::app::Args&);
  std::string_view summary;
};

constexpr Subcommand kSubcommands[] = {
    {"run", hbingest::app::run_command, "consume Kafka and write HBase (the daemon)"},
    {"serve", hbingest::app::serve_command, "serve queries over HTTP without ingesting"},
    {"query", hbingest::app::query_command, "run one n-way scan query and print the rows"},
    {"key", hbingest::app::key_command, "build, explain and plan row keys from a key spec"},
    {"check-config", hbingest::app::check_config_command, "validate a config file"},
    {"bootstrap", hbingest::app::bootstrap_command, "create the HBase table(s), pre-split, with TTL"},
    {"gen", hbingest::app::gen_command, "produce sample login/order events to Kafka"},
    {"metrics-catalog", hbingest::app::metrics_catalog_command, "print every metric the daemon exports (no stack)"},
};

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "hbingest %s: Kafka to HBase event ingestion with salted row keys and parallel scans\n\n"
               "usage: hbingest <command> [options]   (hbingest <command> --help for its options)\n\ncommands:\n",
               hbingest::app::kVersion);
  for (const auto& cmd : kSubcommands) {
    std::fprintf(out, "  %-16.*s %.*s\n", static_cast<int>(cmd.name.size()), cmd.name.data(),
                 static_cast<int>(cmd.summary.size()), cmd.summary.data());
  }
}

}  // namespace

int main(int argc, char** argv) {
  // A peer that closes mid-write (a client of the HTTP port, a TLS terminator in front of a Thrift2
  // gateway: OpenSSL writes cannot pass MSG_NOSIGNAL) must be an EPIPE error, never the process's end.
  std::signal(SIGPIPE, SIG_IGN);
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  const std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(stdout);
    return 0;
  }
  if (name == "--version" || name == "version") {
    std::printf("hbingest %s\n", hbingest::app::kVersion);
    return 0;
  }
  for (const auto& cmd : kSubcommands) {
    if (cmd.name == name) {
      const hbingest::app::Args args(argv + 2, argv + argc);
      try {
        return cmd.run(args);
      } catch (const std::exception& e) {
        // A library's error text may quote a configured value (librdkafka does): scrub the secrets.
        std::fprintf(stderr, "hbingest %s: %s\n", argv[1], hbingest::support::scrub_registered(e.what()).c_str());
        return 1;
      }
    }
  }
  std::fprintf(stderr, "hbingest: unknown command '%s'\n\n", argv[1]);
  print_usage(stderr);
  return 2;
}
