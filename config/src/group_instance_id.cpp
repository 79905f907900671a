#include "hbingest/config/group_instance_id.h"

#include <unistd.h>

#include <algorithm>
#include <array>

namespace hbingest::config {

namespace {

constexpr std::size_t kMaxGroupInstanceIdLength = 249;  // Kafka's limit, as for topic names

bool legal_id_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
         ch == '-';
}

// Kubernetes' generated-name alphabet (k8s.io/apimachinery/pkg/util/rand): no vowels, no 0, 1, 3,
// so generated parts never spell words.
bool generated_char(char ch) {
  constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  return kAlphabet.find(ch) != std::string_view::npos;
}

bool all_generated(std::string_view part) { return std::all_of(part.begin(), part.end(), generated_char); }

}  // namespace

std::optional<std::string> group_instance_id_problem(std::string_view id) {
  if (id.empty()) return "must not be empty";
  if (id == "." || id == "..") return "must not be \".\" or \"..\"";
  if (id.size() > kMaxGroupInstanceIdLength) {
    return "is " + std::to_string(id.size()) + " characters long; Kafka allows at most " +
           std::to_string(kMaxGroupInstanceIdLength);
  }
  const auto bad = std::find_if_not(id.begin(), id.end(), legal_id_char);
  if (bad != id.end()) {
    return "contains '" + std::string(1, *bad) +
           "': Kafka allows only ASCII letters, digits, '.', '_' and '-' in a group.instance.id";
  }
  return std::nullopt;
}

bool looks_like_deployment_pod_name(std::string_view host) {
  // The pod-template-hash is a 32-bit hash written in decimal and mapped onto the alphabet: up to
  // 10 characters, rarely fewer than 6. The suffix is 5 random characters.
  constexpr std::size_t kSuffixLength = 5;
  constexpr std::size_t kMinHashLength = 6;
  constexpr std::size_t kMaxHashLength = 10;
  // Kubernetes cuts the base of a generated name ("<replicaset>-") to 58 characters before it
  // appends the 5 random ones, so a long Deployment name gives 63-character pod names whose hash
  // runs into the random part without a dash: what follows the last dash of the base is then a
  // (possibly empty) cut hash.
  constexpr std::size_t kMaxGeneratedBase = 58;
  if (host.size() == kMaxGeneratedBase + kSuffixLength && all_generated(host.substr(kMaxGeneratedBase))) {
    const auto base = host.substr(0, kMaxGeneratedBase);
    const auto dash = base.rfind('-');
    if (dash != std::string_view::npos && dash > 0 && base.size() - dash - 1 <= kMaxHashLength &&
        all_generated(base.substr(dash + 1))) {
      return true;
    }
  }
  const auto last_dash = host.rfind('-');
  if (last_dash == std::string_view::npos || last_dash == 0) return false;
  const auto suffix = host.substr(last_dash + 1);
  if (suffix.size() != kSuffixLength || !all_generated(suffix)) return false;
  const auto hash_dash = host.rfind('-', last_dash - 1);
  if (hash_dash == std::string_view::npos || hash_dash == 0) return false;
  const auto hash = host.substr(hash_dash + 1, last_dash - hash_dash - 1);
  return hash.size() >= kMinHashLength && hash.size() <= kMaxHashLength && all_generated(hash);
}

std::string resolve_group_instance_id(std::string_view configured, std::string_view host_name) {
  if (configured == kGroupInstanceIdAuto) return std::string(host_name);
  return std::string(configured);
}

std::string host_name() {
  // HOST_NAME_MAX is 64 on Linux; the extra byte keeps a truncated name terminated.
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return {};
  return std::string(buf.data());
}

}  // namespace hbingest::config
