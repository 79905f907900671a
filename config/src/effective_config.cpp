#include "hbingest/config/loader.h"
#include "hbingest/support/secrets.h"
#include "sections.h"

namespace hbingest::config {

namespace {

// Secret keys are written as "***" by their options; this catches a secret anywhere else (a
// ${file:} read into a key whose name does not say secret).
void redact_values(YAML::Node node, const std::vector<std::string>& secrets) {
  if (node.IsScalar()) {
    if (support::scrub(node.Scalar(), secrets) != node.Scalar()) node = std::string(support::kRedacted);
    return;
  }
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) redact_values(node[i], secrets);
  } else if (node.IsMap()) {
    for (auto entry : node) redact_values(entry.second, secrets);
  }
}

}  // namespace

std::string effective_config_yaml(const Config& config) {
  YAML::Node effective = detail::write_mapping(config, detail::config_options());
  redact_values(effective, config.secrets);
  YAML::Emitter out;
  if (!config.source.empty()) out << YAML::Comment("effective configuration of " + config.source.string());
  out << effective;
  std::string text = out.c_str();
  text += '\n';
  return text;
}

}  // namespace hbingest::config
