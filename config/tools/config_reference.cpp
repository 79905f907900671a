// Prints the generated option reference (Markdown) to stdout, for docs/configuration.md.
#include <cstdio>

#include "hbingest/config/loader.h"

int main() {
  const std::string reference = hbingest::config::configuration_reference_markdown();
  std::fwrite(reference.data(), 1, reference.size(), stdout);
  return 0;
}
