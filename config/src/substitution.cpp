#include "substitution.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace hbingest::config::detail {

namespace {

// Tokens, passwords and key passphrases are bytes to a few KB; PEM material is passed by path.
constexpr std::size_t kMaxSecretFileBytes = 64 * 1024;

bool valid_env_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

std::string read_secret_file(std::string_view path_text, const std::filesystem::path& base_dir) {
  if (path_text.empty()) throw SubstitutionError("${file:} needs a path");
  std::filesystem::path path(path_text);
  if (path.is_relative()) path = base_dir / path;
  const std::string reference = "${file:" + std::string(path_text) + "}";
  // A secret is a small regular file (a Kubernetes secret mount is a symlink to one). Anything else
  // would be read whole or block the loader: /dev/zero never ends, a FIFO or /dev/stdin waits.
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error)
    throw SubstitutionError("cannot read file '" + path.string() + "' for " + reference + ": " + error.message());
  if (!std::filesystem::is_regular_file(status)) {
    throw SubstitutionError("'" + path.string() + "' for " + reference + " is not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw SubstitutionError("cannot read file '" + path.string() + "' for " + reference + ": " + std::strerror(errno));
  }
  std::string value(kMaxSecretFileBytes + 1, '\0');
  in.read(value.data(), static_cast<std::streamsize>(value.size()));
  if (in.bad()) throw SubstitutionError("error reading file '" + path.string() + "'");
  value.resize(static_cast<std::size_t>(in.gcount()));
  if (value.size() > kMaxSecretFileBytes) {
    throw SubstitutionError("'" + path.string() + "' for " + reference + " is larger than " +
                            std::to_string(kMaxSecretFileBytes / 1024) + " KiB: not a secret");
  }
  // Secret files usually end with a newline that is not part of the secret.
  if (!value.empty() && value.back() == '\n') value.pop_back();
  if (!value.empty() && value.back() == '\r') value.pop_back();
  return value;
}

std::string substitute(std::string_view text, const std::filesystem::path& base_dir,
                       std::vector<std::string>* from_files) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t dollar = text.find('$', pos);
    if (dollar == std::string_view::npos) {
      out.append(text.substr(pos));
      break;
    }
    out.append(text.substr(pos, dollar - pos));
    if (text.substr(dollar, 3) == "$${") {
      out += "${";
      pos = dollar + 3;
      continue;
    }
    if (text.substr(dollar, 2) != "${") {
      out += '$';
      pos = dollar + 1;
      continue;
    }
    const std::size_t close = text.find('}', dollar + 2);
    if (close == std::string_view::npos) {
      throw SubstitutionError("unterminated '${' at offset " + std::to_string(dollar) + " (write '$${' for a literal)");
    }
    const std::string_view reference = text.substr(dollar + 2, close - dollar - 2);
    if (reference.starts_with("file:")) {
      const std::string content = read_secret_file(reference.substr(5), base_dir);
      if (from_files != nullptr) from_files->push_back(content);
      out += content;
    } else if (!valid_env_name(reference)) {
      throw SubstitutionError("'${" + std::string(reference) +
                              "}' is neither an environment variable name nor ${file:PATH}");
    } else {
      const char* value = std::getenv(std::string(reference).c_str());
      if (value == nullptr) throw SubstitutionError("environment variable '" + std::string(reference) + "' is not set");
      out += value;
    }
    pos = close + 1;
  }
  return out;
}

bool has_reference(std::string_view text) {
  for (std::size_t pos = text.find("${"); pos != std::string_view::npos; pos = text.find("${", pos + 2)) {
    if (pos == 0 || text[pos - 1] != '$') return true;
  }
  return false;
}

}  // namespace hbingest::config::detail
