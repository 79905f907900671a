#pragma once
// kafka.group_instance_id: Kafka static group membership (KIP-345). A member with an id keeps its
// partitions across a restart: the group waits for it (up to session.timeout.ms) instead of
// rebalancing when it goes, and gives it its assignment back when it returns. Pure functions, so
// that check-config and run decide alike and tests need no host of a given name.

#include <optional>
#include <string>
#include <string_view>

namespace hbingest::config {

// The configured value that asks for the host name (in a StatefulSet the stable pod name).
inline constexpr std::string_view kGroupInstanceIdAuto = "auto";

// Why `id` is not a valid group.instance.id, or nullopt when it is. Kafka's own rule
// (JoinGroupRequest.validateGroupInstanceId, the topic-name rule): not empty, not "." or "..", at
// most 249 characters, only ASCII letters, digits, '.', '_' and '-'.
std::optional<std::string> group_instance_id_problem(std::string_view id);

// Whether `host` looks like the generated name of a Deployment's pod,
// "<deployment>-<pod-template-hash>-<5 characters>" (both from Kubernetes' alphabet without vowels
// and the digits 0, 1, 3): a name that changes with every restart, so no stable id. Also the
// 63-character form Kubernetes makes of a long one (its base cut to 58 characters, the hash with it).
bool looks_like_deployment_pod_name(std::string_view host);

// The id a configured value stands for: "" (static membership off) stays "", "auto" becomes
// `host_name`, anything else is used verbatim.
std::string resolve_group_instance_id(std::string_view configured, std::string_view host_name);

// This machine's host name (gethostname); "" when it cannot be read.
std::string host_name();

}  // namespace hbingest::config
