#include "hbingest/config/loader.h"
#include "sections.h"

namespace hbingest::config {

std::string effective_config_yaml(const Config& config) {
  YAML::Emitter out;
  if (!config.source.empty()) out << YAML::Comment("effective configuration of " + config.source.string());
  out << detail::write_mapping(config, detail::config_options());
  std::string text = out.c_str();
  text += '\n';
  return text;
}

}  // namespace hbingest::config
