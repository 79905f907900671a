#include "hbingest/support/secrets.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <memory>
#include <mutex>

namespace hbingest::support {

namespace {

std::vector<std::string> words_of(std::string_view name) {
  std::vector<std::string> words(1);
  for (const char c : name) {
    if (c == '.' || c == '_' || c == '-') {
      if (!words.back().empty()) words.emplace_back();
    } else {
      words.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

bool has_word(const std::vector<std::string>& words, std::string_view word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

std::vector<std::string> longest_first(std::vector<std::string> secrets) {
  secrets.erase(std::remove_if(secrets.begin(), secrets.end(),
                               [](const std::string& s) { return s.size() < kMinScrubbedLength; }),
                secrets.end());
  std::sort(secrets.begin(), secrets.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  secrets.erase(std::unique(secrets.begin(), secrets.end()), secrets.end());
  return secrets;
}

// `secrets` as longest_first() returns them.
std::string scrub_sorted(std::string_view text, const std::vector<std::string>& secrets) {
  std::string out(text);
  for (const auto& secret : secrets) {
    for (std::size_t pos = out.find(secret); pos != std::string::npos; pos = out.find(secret, pos + kRedacted.size())) {
      out.replace(pos, secret.size(), kRedacted);
    }
  }
  return out;
}

std::mutex registry_mutex;
std::shared_ptr<const std::vector<std::string>> registry = std::make_shared<const std::vector<std::string>>();

std::shared_ptr<const std::vector<std::string>> registered() {
  std::lock_guard lock(registry_mutex);
  return registry;
}

}  // namespace

bool is_secret_key(std::string_view name) {
  const std::vector<std::string> words = words_of(name);
  if (words.empty()) return false;
  static constexpr std::array<std::string_view, 5> kReferences = {"location", "file", "path", "dir", "env"};
  if (std::find(kReferences.begin(), kReferences.end(), words.back()) != kReferences.end()) return false;
  static constexpr std::array<std::string_view, 8> kMarkers = {"password", "passwd",     "passphrase", "secret",
                                                               "token",    "credential", "jaas",       "apikey"};
  for (const auto& word : words) {
    for (const auto marker : kMarkers) {
      if (word.find(marker) != std::string::npos) return true;
    }
  }
  if (has_word(words, "key") && has_word(words, "pem")) return true;
  if (words.back() == "key" && words.size() >= 2) {
    static constexpr std::array<std::string_view, 5> kKeyOwners = {"ssl", "tls", "keystore", "private", "client"};
    const std::string& owner = words[words.size() - 2];
    if (std::find(kKeyOwners.begin(), kKeyOwners.end(), owner) != kKeyOwners.end()) return true;
  }
  const auto ends_with = [&](std::string_view a, std::string_view b, std::string_view c) {
    const std::size_t n = words.size();
    return n >= 3 && words[n - 3] == a && words[n - 2] == b && words[n - 1] == c;
  };
  return ends_with("sasl", "oauthbearer", "config") || ends_with("sasl", "oauthbearer", "extensions") ||
         ends_with("kerberos", "kinit", "cmd");
}

std::string scrub(std::string_view text, const std::vector<std::string>& secrets) {
  return scrub_sorted(text, longest_first(secrets));
}

void register_secrets(const std::vector<std::string>& secrets) {
  std::lock_guard lock(registry_mutex);
  std::vector<std::string> merged = *registry;
  merged.insert(merged.end(), secrets.begin(), secrets.end());
  registry = std::make_shared<const std::vector<std::string>>(longest_first(std::move(merged)));
}

std::string scrub_registered(std::string_view text) {
  const auto secrets = registered();
  return scrub_sorted(text, *secrets);
}

void clear_registered_secrets() {
  std::lock_guard lock(registry_mutex);
  registry = std::make_shared<const std::vector<std::string>>();
}

}  // namespace hbingest::support
