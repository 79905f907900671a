// deploy/kubernetes/: every manifest parses, names itself and passes Kubernetes' own schemas
// (kubernetes-validate, offline), the StatefulSet probes the endpoints the daemon serves, outlives
// its drain, runs locked down, the NetworkPolicy opens only what the config needs, the example
// Secret is never applied, and the ConfigMap + Secret it projects into /etc/hbingest form a config
// that `hbingest check-config` accepts. The Kerberos component (deploy/kubernetes/kerberos/) is
// applied to them as kustomize would, and the result passes the same checks, with the keytab never
// readable by others.

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

#include "deploy_test_support.h"

namespace hbingest::deploy_test {
namespace {

struct Manifest {
  std::string file;
  YAML::Node node;
};

std::filesystem::path manifest_dir() { return source_dir() / "deploy" / "kubernetes"; }

std::vector<Manifest> load_manifests() {
  std::vector<Manifest> manifests;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(manifest_dir())) {
    if (entry.path().extension() == ".yaml" || entry.path().extension() == ".yml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    for (const auto& doc : YAML::LoadAllFromFile(file.string())) {
      if (!doc.IsNull()) manifests.push_back({file.filename().string(), doc});
    }
  }
  return manifests;
}

const YAML::Node& find_kind(const std::vector<Manifest>& manifests, const std::string& kind) {
  for (const auto& m : manifests) {
    if (m.node["kind"].as<std::string>("") == kind) return m.node;
  }
  throw std::runtime_error("no " + kind + " in deploy/kubernetes");
}

const YAML::Node& find_object(const std::vector<Manifest>& manifests, const std::string& kind,
                              const std::string& name) {
  for (const auto& m : manifests) {
    if (m.node["kind"].as<std::string>("") == kind && m.node["metadata"]["name"].as<std::string>("") == name)
      return m.node;
  }
  throw std::runtime_error("no " + kind + " " + name + " in the manifests");
}

std::filesystem::path kerberos_dir() { return manifest_dir() / "kerberos"; }

bool named_entries(const YAML::Node& sequence) {
  if (sequence.size() == 0) return false;
  for (const auto& item : sequence) {
    if (!item.IsMap() || !item["name"] || !item["name"].IsScalar()) return false;
  }
  return true;
}

// A strategic merge patch as kustomize applies it to the fields our patches touch: maps merge,
// lists of named entries (containers, volumes, volumeMounts, env) merge by name, and any other list
// (a projected volume's sources) is replaced whole, as those lists have no merge key.
void strategic_merge(YAML::Node target, const YAML::Node& patch) {
  for (const auto& entry : patch) {
    const auto key = entry.first.as<std::string>();
    YAML::Node current = target[key];
    if (current.IsMap() && entry.second.IsMap()) {
      strategic_merge(current, entry.second);
    } else if (current.IsSequence() && entry.second.IsSequence() && named_entries(entry.second) &&
               named_entries(current)) {
      for (const auto& item : entry.second) {
        bool merged = false;
        for (YAML::Node existing : current) {
          if (existing["name"].as<std::string>() == item["name"].as<std::string>()) {
            strategic_merge(existing, item);
            merged = true;
          }
        }
        if (!merged) current.push_back(YAML::Clone(item));
      }
    } else {
      target[key] = YAML::Clone(entry.second);
    }
  }
}

// A JSON patch (RFC 6902); our patches only append to a list (`add` at `.../-`).
void json_patch(YAML::Node target, const YAML::Node& operations) {
  for (const auto& operation : operations) {
    const auto op = operation["op"].as<std::string>("");
    const auto path = operation["path"].as<std::string>("");
    if (op != "add" || !path.ends_with("/-")) throw std::runtime_error("unsupported JSON patch: " + op + " " + path);
    YAML::Node node = target;
    std::stringstream segments(path.substr(1, path.size() - 3));
    for (std::string segment; std::getline(segments, segment, '/');) {
      YAML::Node next = node.IsSequence() ? node[std::stoul(segment)] : node[segment];
      node.reset(next);
    }
    if (!node.IsSequence()) throw std::runtime_error(path + " is not a list");
    node.push_back(YAML::Clone(operation["value"]));
  }
}

// The base with the Kerberos component applied: its resources added, each patch applied to its
// target (kind and name).
std::vector<Manifest> kerberized_manifests() {
  auto manifests = load_manifests();
  for (auto& m : manifests) m.node = YAML::Clone(m.node);
  const YAML::Node component = YAML::LoadFile((kerberos_dir() / "kustomization.yaml").string());
  if (component["kind"].as<std::string>("") != "Component") throw std::runtime_error("kerberos/ is not a Component");
  for (const auto& resource : component["resources"]) {
    const auto file = resource.as<std::string>();
    for (const auto& doc : YAML::LoadAllFromFile((kerberos_dir() / file).string())) {
      if (!doc.IsNull()) manifests.push_back({"kerberos/" + file, doc});
    }
  }
  for (const auto& patch : component["patches"]) {
    const auto kind = patch["target"]["kind"].as<std::string>();
    const auto name = patch["target"]["name"].as<std::string>();
    const YAML::Node body = YAML::LoadFile((kerberos_dir() / patch["path"].as<std::string>()).string());
    bool applied = false;
    for (auto& m : manifests) {
      if (m.node["kind"].as<std::string>("") != kind || m.node["metadata"]["name"].as<std::string>("") != name)
        continue;
      if (body.IsSequence()) {
        json_patch(m.node, body);
      } else {
        YAML::Node spec_only = YAML::Clone(body);
        spec_only.remove("apiVersion");
        spec_only.remove("kind");
        spec_only.remove("metadata");
        strategic_merge(m.node, spec_only);
      }
      applied = true;
    }
    if (!applied) throw std::runtime_error(patch["path"].as<std::string>() + ": no " + kind + " " + name);
  }
  return manifests;
}

// An object as the API server reads it, for kubernetes-validate: quoted scalars stay strings, plain
// ones resolve as YAML 1.1 does (booleans, null, integers, octal with a leading 0). yaml-cpp's own
// emitter would drop the quotes of `"true"` and turn a label value into a boolean.
nlohmann::json to_json(const YAML::Node& node) {
  if (node.IsMap()) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& entry : node) object[entry.first.as<std::string>()] = to_json(entry.second);
    return object;
  }
  if (node.IsSequence()) {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& item : node) array.push_back(to_json(item));
    return array;
  }
  if (!node.IsScalar()) return nullptr;
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return text;
  if (text == "true" || text == "false") return text == "true";
  if (text.empty() || text == "null" || text == "~") return nullptr;
  static const std::regex kInteger("-?[0-9]+");
  if (std::regex_match(text, kInteger)) return std::stoll(text, nullptr, text.size() > 1 && text[0] == '0' ? 8 : 10);
  return text;
}

// A file mode as a manifest writes it: octal with a leading 0 (0440), decimal otherwise (288).
int file_mode(const YAML::Node& node) {
  const auto text = node.as<std::string>();
  return static_cast<int>(std::stoul(text, nullptr, text.size() > 1 && text[0] == '0' ? 8 : 10));
}

// Seconds of a duration as the config writes it (`30s`, `1m30s`, `500ms`).
double duration_seconds(const std::string& text) {
  static const std::regex kPart(R"((\d+)(ms|s|m|h|d))");
  double seconds = 0;
  std::size_t consumed = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), kPart), end; it != end; ++it) {
    const double n = std::stod((*it)[1]);
    const std::string unit = (*it)[2];
    seconds += unit == "ms" ? n / 1000 : unit == "s" ? n : unit == "m" ? n * 60 : unit == "h" ? n * 3600 : n * 86400;
    consumed += it->length();
  }
  if (consumed != text.size() || text.empty()) throw std::invalid_argument("not a duration: '" + text + "'");
  return seconds;
}

bool labels_match(const YAML::Node& selector, const YAML::Node& labels) {
  if (!selector.IsMap() || selector.size() == 0) return false;
  for (const auto& pair : selector) {
    if (labels[pair.first.as<std::string>()].as<std::string>("") != pair.second.as<std::string>()) return false;
  }
  return true;
}

// A keytab (MIT's file format, version 0x502) holding one aes256 key of `principal`: what an
// operator's `kubectl create secret --from-file=hbingest.keytab=...` puts in the pod.
std::string stand_in_keytab(const std::string& principal) {
  std::string entry;
  const auto u16 = [&entry](std::size_t v) { entry += {static_cast<char>(v >> 8), static_cast<char>(v & 0xff)}; };
  const auto u32 = [&](std::size_t v) {
    u16(v >> 16);
    u16(v & 0xffff);
  };
  const auto counted = [&](const std::string& text) {
    u16(text.size());
    entry += text;
  };
  const auto at = principal.rfind('@');
  std::vector<std::string> components;
  std::stringstream name(principal.substr(0, at));
  for (std::string part; std::getline(name, part, '/');) components.push_back(part);
  u16(components.size());
  counted(principal.substr(at + 1));
  for (const auto& part : components) counted(part);
  u32(1);                         // KRB5_NT_PRINCIPAL
  u32(0);                         // timestamp
  entry += '\x01';                // key version
  u16(18);                        // aes256-cts-hmac-sha1-96
  counted(std::string(32, 'k'));  // the key
  std::string file = "\x05\x02";
  const std::size_t size = entry.size();
  for (const int shift : {24, 16, 8, 0}) file += static_cast<char>((size >> shift) & 0xff);
  return file + entry;
}

// Writes what the container sees under each of its volume mounts into `root` + the mount path, as
// the kubelet would: ConfigMap data and Secret stringData under their item paths. A Secret the
// operator makes from a binary file (the keytab) has no example manifest: a keytab of `principal`
// stands in for each of its `*.keytab` items.
void materialize_mounts(const std::vector<Manifest>& manifests, const YAML::Node& pod, const YAML::Node& container,
                        const std::filesystem::path& root, const std::string& principal) {
  for (const auto& mount : container["volumeMounts"]) {
    const auto mount_path = root / mount["mountPath"].as<std::string>().substr(1);
    YAML::Node volume;
    for (const auto& v : pod["volumes"]) {
      if (v["name"].as<std::string>() == mount["name"].as<std::string>()) volume.reset(v);
    }
    ASSERT_TRUE(volume.IsMap()) << "no volume " << mount["name"];
    std::vector<std::pair<bool, YAML::Node>> sources;  // (is a ConfigMap, its reference)
    if (volume["projected"]) {
      for (const auto& source : volume["projected"]["sources"]) {
        const bool is_config_map = source["configMap"].IsDefined();
        sources.emplace_back(is_config_map, is_config_map ? source["configMap"] : source["secret"]);
      }
    } else if (volume["secret"]) {
      YAML::Node ref = YAML::Clone(volume["secret"]);
      ref["name"] = ref["secretName"];
      sources.emplace_back(false, ref);
    } else {
      sources.emplace_back(true, volume["configMap"]);
    }
    for (const auto& [is_config_map, ref] : sources) {
      const std::string name = ref["name"].as<std::string>();
      const YAML::Node* object = nullptr;
      for (const auto& m : manifests) {
        if (m.node["kind"].as<std::string>("") == (is_config_map ? "ConfigMap" : "Secret") &&
            m.node["metadata"]["name"].as<std::string>("") == name) {
          object = &m.node;
        }
      }
      ASSERT_TRUE(ref["items"].IsSequence()) << name << ": list the mounted items";
      for (const auto& item : ref["items"]) {
        const std::string key = item["key"].as<std::string>();
        const auto path = mount_path / item["path"].as<std::string>();
        if (object == nullptr && !is_config_map && key.ends_with(".keytab")) {
          write_file(path, stand_in_keytab(principal));
          continue;
        }
        ASSERT_NE(object, nullptr) << "volume " << mount["name"] << " takes " << name << ", which no manifest defines";
        const YAML::Node data = is_config_map ? (*object)["data"] : (*object)["stringData"];
        ASSERT_TRUE(data[key].IsScalar()) << name << " has no key " << key;
        write_file(path, data[key].as<std::string>());
      }
    }
  }
}

// `text` with every absolute path under one of the container's mounts moved under `root`.
std::string rooted(std::string text, const YAML::Node& container, const std::filesystem::path& root) {
  for (const auto& mount : container["volumeMounts"]) {
    const std::string from = mount["mountPath"].as<std::string>() + "/";
    const std::string to = (root / from.substr(1)).string();
    for (auto pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size())) {
      text.replace(pos, from.size(), to);
    }
  }
  return text;
}

const YAML::Node container_of(const YAML::Node& workload) {
  const YAML::Node containers = workload["spec"]["template"]["spec"]["containers"];
  if (!containers.IsSequence() || containers.size() != 1) throw std::runtime_error("expected one container");
  return containers[0];
}

TEST(KubernetesManifests, EveryObjectParsesAndNamesItself) {
  const auto manifests = load_manifests();
  ASSERT_GE(manifests.size(), 8u);
  std::set<std::string> kinds;
  for (const auto& m : manifests) {
    ASSERT_TRUE(m.node.IsMap()) << m.file;
    EXPECT_FALSE(m.node["apiVersion"].as<std::string>("").empty()) << m.file << ": apiVersion";
    EXPECT_FALSE(m.node["kind"].as<std::string>("").empty()) << m.file << ": kind";
    EXPECT_FALSE(m.node["metadata"]["name"].as<std::string>("").empty()) << m.file << ": metadata.name";
    kinds.insert(m.node["apiVersion"].as<std::string>("") + "/" + m.node["kind"].as<std::string>(""));
  }
  for (const char* kind :
       {"apps/v1/StatefulSet", "v1/ConfigMap", "v1/Secret", "v1/Service", "networking.k8s.io/v1/NetworkPolicy",
        "policy/v1/PodDisruptionBudget", "monitoring.coreos.com/v1/ServiceMonitor",
        "monitoring.coreos.com/v1/PodMonitor", "kustomize.config.k8s.io/v1beta1/Kustomization"}) {
    EXPECT_TRUE(kinds.contains(kind)) << "missing " << kind;
  }
}

TEST(KubernetesManifests, KustomizationResourcesExist) {
  const auto kustomization = find_kind(load_manifests(), "Kustomization");
  ASSERT_TRUE(kustomization["resources"].IsSequence());
  for (const auto& resource : kustomization["resources"]) {
    EXPECT_TRUE(std::filesystem::is_regular_file(manifest_dir() / resource.as<std::string>()))
        << resource.as<std::string>();
  }
}

// Before, the kustomization applied secret.example.yaml, so its placeholder token went live. The
// StatefulSet names a Secret the operator creates (docs/operations.md).
TEST(KubernetesManifests, KustomizationNeverAppliesASecret) {
  const auto manifests = load_manifests();
  const auto kustomization = find_kind(manifests, "Kustomization");
  std::set<std::string> resources;
  for (const auto& resource : kustomization["resources"]) resources.insert(resource.as<std::string>());
  for (const auto& m : manifests) {
    if (m.node["kind"].as<std::string>("") == "Secret") {
      EXPECT_FALSE(resources.contains(m.file)) << m.file << " is an example: the operator creates the Secret";
    }
  }
  EXPECT_TRUE(resources.contains("networkpolicy.yaml"));
  EXPECT_FALSE(kustomization["secretGenerator"].IsDefined()) << "no secret values in the repository";
}

TEST(KubernetesManifests, SecretExampleHoldsOnlyPlaceholders) {
  const auto secret = find_kind(load_manifests(), "Secret");
  ASSERT_TRUE(secret["stringData"].IsMap());
  EXPECT_FALSE(secret["data"].IsDefined()) << "stringData keeps the example readable";
  for (const auto& entry : secret["stringData"]) {
    const auto key = entry.first.as<std::string>();
    if (key.find("password") != std::string::npos || key.find("token") != std::string::npos) {
      EXPECT_NE(entry.second.as<std::string>().find("CHANGE-ME"), std::string::npos) << key;
    }
  }
}

// The checks below hold for the base and for the base with the Kerberos component applied.
class KubernetesManifestSet : public ::testing::TestWithParam<std::string> {
 protected:
  static std::vector<Manifest> manifests() {
    return GetParam() == "kerberos" ? kerberized_manifests() : load_manifests();
  }
};

TEST_P(KubernetesManifestSet, StatefulSetProbesTheDaemonEndpoints) {
  const auto manifests = this->manifests();
  const auto container = container_of(find_kind(manifests, "StatefulSet"));
  EXPECT_EQ(container["livenessProbe"]["httpGet"]["path"].as<std::string>(""), "/healthz");
  EXPECT_EQ(container["readinessProbe"]["httpGet"]["path"].as<std::string>(""), "/readyz");
  std::set<std::string> port_names;
  for (const auto& port : container["ports"]) port_names.insert(port["name"].as<std::string>(""));
  EXPECT_TRUE(port_names.contains("metrics")) << "Prometheus scrapes the port named metrics";
  for (const char* probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
    if (!container[probe]) continue;
    EXPECT_TRUE(port_names.contains(container[probe]["httpGet"]["port"].as<std::string>(""))) << probe;
  }
}

TEST_P(KubernetesManifestSet, WorkloadsRunLockedDownWithResources) {
  const auto manifests = this->manifests();
  for (const char* kind : {"StatefulSet", "Job"}) {
    SCOPED_TRACE(kind);
    const auto workload = find_kind(manifests, kind);
    const auto pod = workload["spec"]["template"]["spec"];
    EXPECT_TRUE(pod["securityContext"]["runAsNonRoot"].as<bool>(false));
    EXPECT_GT(pod["securityContext"]["runAsUser"].as<int>(0), 0);
    EXPECT_EQ(pod["securityContext"]["seccompProfile"]["type"].as<std::string>(""), "RuntimeDefault");
    const auto container = container_of(workload);
    const auto security = container["securityContext"];
    EXPECT_FALSE(security["allowPrivilegeEscalation"].as<bool>(true));
    EXPECT_TRUE(security["readOnlyRootFilesystem"].as<bool>(false));
    EXPECT_FALSE(security["privileged"].as<bool>(true));
    ASSERT_TRUE(security["capabilities"]["drop"].IsSequence());
    EXPECT_EQ(security["capabilities"]["drop"][0].as<std::string>(""), "ALL");
    EXPECT_FALSE(security["capabilities"]["add"].IsDefined());
    for (const char* bound : {"requests", "limits"}) {
      for (const char* resource : {"cpu", "memory"}) {
        EXPECT_TRUE(container["resources"][bound][resource].IsScalar()) << bound << "." << resource;
      }
    }
  }
}

TEST_P(KubernetesManifestSet, SelectorsConnectServiceMonitorsAndBudget) {
  const auto manifests = this->manifests();
  const auto workload = find_kind(manifests, "StatefulSet");
  const auto pod_labels = workload["spec"]["template"]["metadata"]["labels"];
  EXPECT_TRUE(labels_match(workload["spec"]["selector"]["matchLabels"], pod_labels));
  const auto service = find_kind(manifests, "Service");
  EXPECT_TRUE(labels_match(service["spec"]["selector"], pod_labels));
  EXPECT_TRUE(labels_match(find_kind(manifests, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"], pod_labels));
  std::set<std::string> container_ports;
  for (const auto& port : container_of(workload)["ports"]) container_ports.insert(port["name"].as<std::string>(""));
  std::set<std::string> service_ports;
  for (const auto& port : service["spec"]["ports"]) {
    service_ports.insert(port["name"].as<std::string>(""));
    EXPECT_TRUE(container_ports.contains(port["targetPort"].as<std::string>(""))) << port["name"];
  }
  // http.metrics_auth: every monitor sends the query token from the Secret the StatefulSet mounts.
  const auto expect_bearer_from_the_secret = [&](const YAML::Node& endpoint) {
    const auto authorization = endpoint["authorization"];
    EXPECT_EQ(authorization["type"].as<std::string>(""), "Bearer");
    const auto secret = find_kind(manifests, "Secret");
    EXPECT_EQ(authorization["credentials"]["name"].as<std::string>(""), secret["metadata"]["name"].as<std::string>());
    EXPECT_TRUE(secret["stringData"][authorization["credentials"]["key"].as<std::string>("")].IsDefined());
  };
  const auto service_monitor = find_kind(manifests, "ServiceMonitor");
  EXPECT_TRUE(labels_match(service_monitor["spec"]["selector"]["matchLabels"], service["metadata"]["labels"]));
  for (const auto& endpoint : service_monitor["spec"]["endpoints"]) {
    EXPECT_TRUE(service_ports.contains(endpoint["port"].as<std::string>(""))) << "ServiceMonitor port";
    EXPECT_EQ(endpoint["path"].as<std::string>("/metrics"), "/metrics");
    expect_bearer_from_the_secret(endpoint);
  }
  const auto pod_monitor = find_kind(manifests, "PodMonitor");
  EXPECT_TRUE(labels_match(pod_monitor["spec"]["selector"]["matchLabels"], pod_labels));
  for (const auto& endpoint : pod_monitor["spec"]["podMetricsEndpoints"]) {
    EXPECT_EQ(endpoint["port"].as<std::string>(""), "metrics");
    expect_bearer_from_the_secret(endpoint);
  }
}

// Static group membership needs a stable, unique name per pod: a StatefulSet's (hbingest-0, ...),
// taken by `group_instance_id: auto`. A Deployment's generated names would change on each restart
// (check-config refuses `auto` there), so there must be none.
TEST_P(KubernetesManifestSet, StatefulSetGivesEachPodItsStaticMembership) {
  const auto manifests = this->manifests();
  for (const auto& m : manifests) EXPECT_NE(m.node["kind"].as<std::string>(""), "Deployment") << m.file;
  const auto workload = find_kind(manifests, "StatefulSet");
  EXPECT_EQ(workload["spec"]["podManagementPolicy"].as<std::string>(""), "Parallel")
      << "pods start together, not one after another";
  EXPECT_EQ(workload["spec"]["updateStrategy"]["type"].as<std::string>(""), "RollingUpdate");
  const auto governing = find_object(manifests, "Service", workload["spec"]["serviceName"].as<std::string>(""));
  EXPECT_EQ(governing["spec"]["clusterIP"].as<std::string>(""), "None") << "the governing Service is headless";
  EXPECT_TRUE(labels_match(governing["spec"]["selector"], workload["spec"]["template"]["metadata"]["labels"]));
  const YAML::Node config =
      YAML::Load(find_object(manifests, "ConfigMap", "hbingest-config")["data"]["hbingest.yaml"].as<std::string>());
  EXPECT_EQ(config["kafka"]["group_instance_id"].as<std::string>(""), "auto") << "the pod name as the member's id";
  EXPECT_EQ(find_kind(manifests, "PodDisruptionBudget")["spec"]["maxUnavailable"].as<int>(0), 1);
}

// The real check: the ConfigMap's config with the Secret's files, as the pod sees them.
TEST_P(KubernetesManifestSet, ConfigMapConfigPassesCheckConfigAndFitsTheStatefulSet) {
  const auto manifests = this->manifests();
  const auto workload = find_kind(manifests, "StatefulSet");
  const auto pod = workload["spec"]["template"]["spec"];
  const auto container = container_of(workload);

  // args: run --config /etc/hbingest/<file>, and /etc/hbingest is the projected config volume.
  const auto args = container["args"].as<std::vector<std::string>>();
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[0], "run");
  EXPECT_EQ(args[1], "--config");
  const std::filesystem::path config_in_pod = args[2];
  std::string volume_name;
  for (const auto& mount : container["volumeMounts"]) {
    if (mount["mountPath"].as<std::string>() == config_in_pod.parent_path().string())
      volume_name = mount["name"].as<std::string>();
  }
  ASSERT_FALSE(volume_name.empty()) << "no volume mounted at " << config_in_pod.parent_path();
  YAML::Node volume;
  for (const auto& v : pod["volumes"]) {
    if (v["name"].as<std::string>() == volume_name) volume.reset(v);
  }
  ASSERT_TRUE(volume["projected"].IsDefined()) << "config and secrets share one projected volume";

  // Every mount under a temporary root, the config's and the environment's absolute paths with it.
  const TempDir dir;
  const std::string config_text =
      find_object(manifests, "ConfigMap", "hbingest-config")["data"]["hbingest.yaml"].as<std::string>();
  const YAML::Node config = YAML::Load(config_text);
  const std::string principal = config["hbase"]["sasl"] ? config["hbase"]["sasl"]["principal"].as<std::string>("")
                                                        : std::string("hbingest@EXAMPLE.NET");
  materialize_mounts(manifests, pod, container, dir.path(), principal);
  if (HasFatalFailure()) return;
  const auto config_file = dir.path() / config_in_pod.relative_path();
  write_file(config_file, rooted(config_text, container, dir.path()));
  std::map<std::string, std::string> env;
  for (const auto& var : container["env"]) {
    if (var["value"].IsDefined())
      env[var["name"].as<std::string>()] = rooted(var["value"].as<std::string>(), container, dir.path());
  }
  const auto result = run({hbingest_binary().string(), "check-config", config_file.string(), "--print-effective"}, env);
  ASSERT_EQ(result.exit_code, 0) << result.output;

  const YAML::Node effective = YAML::Load(result.output);
  const auto listen = effective["http"]["listen"].as<std::string>("");
  EXPECT_TRUE(effective["http"]["enabled"].as<bool>(false));
  EXPECT_EQ(listen.substr(0, listen.rfind(':')), "0.0.0.0") << "other pods and the kubelet must reach it";
  std::map<std::string, int> ports;
  for (const auto& port : container["ports"]) ports[port["name"].as<std::string>("")] = port["containerPort"].as<int>();
  EXPECT_EQ(listen.substr(listen.rfind(':') + 1), std::to_string(ports["http"]));
  // Probes and scrapes go to the health listener, whose workers the query port cannot take.
  const auto health = effective["http"]["health_listen"].as<std::string>("");
  EXPECT_EQ(health.substr(health.rfind(':') + 1), std::to_string(ports["metrics"]));
  for (const char* probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
    EXPECT_EQ(container[probe]["httpGet"]["port"].as<std::string>(""), "metrics") << probe;
  }
  EXPECT_TRUE(effective["http"]["metrics_auth"].as<bool>(false));
  EXPECT_EQ(effective["http"]["bearer_token"].as<std::string>(""), "***") << "the query API needs the token";

  // The container's memory limit covers what this config lets the daemon hold (the same sum as
  // the systemd units', deploy_test_support.h), and its request the in-flight events at least.
  const std::string limit = container["resources"]["limits"]["memory"].as<std::string>();
  ASSERT_TRUE(limit.ends_with("Mi") || limit.ends_with("Gi")) << limit;
  const double limit_mib = std::stod(limit) * (limit.ends_with("Gi") ? 1024 : 1);
  const double bound_mib = resource_bound(effective, true).memory_mib;
  EXPECT_GE(limit_mib, bound_mib) << "the OOM killer would stop the daemon within its own bounds";
  EXPECT_LE(limit_mib, 2 * bound_mib);

  // The whole shutdown fits in shutdown_deadline; the daemon's backstop (app/signals.h,
  // SignalWatcher::kStopGrace) ends it 5 s later at the latest. SIGKILL must come after both.
  const double budget = duration_seconds(effective["shutdown_deadline"].as<std::string>()) + 5;
  EXPECT_GT(pod["terminationGracePeriodSeconds"].as<double>(0), budget)
      << "SIGKILL would cut the shutdown short: keep terminationGracePeriodSeconds above shutdown_deadline + 5 s";
}

// Ports of a comma-separated host:port list ("a:9093,b:9093") or of a sequence of host:port.
std::set<int> ports_of(const YAML::Node& node) {
  std::vector<std::string> endpoints;
  if (node.IsSequence()) {
    endpoints = node.as<std::vector<std::string>>();
  } else {
    std::stringstream list(node.as<std::string>());
    for (std::string item; std::getline(list, item, ',');) endpoints.push_back(item);
  }
  std::set<int> ports;
  for (const auto& endpoint : endpoints) ports.insert(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
  return ports;
}

// "TCP/88" for the KDCs of the krb5.conf ConfigMap (`kdc = host[:port]`), and "UDP/88" too unless
// udp_preference_limit = 1 keeps the client on TCP. Empty without Kerberos.
std::set<std::string> kdc_ports(const std::vector<Manifest>& manifests) {
  std::set<std::string> ports;
  for (const auto& m : manifests) {
    if (m.node["kind"].as<std::string>("") != "ConfigMap" || !m.node["data"]["krb5.conf"]) continue;
    const auto krb5 = m.node["data"]["krb5.conf"].as<std::string>();
    const bool tcp_only = std::regex_search(krb5, std::regex(R"(udp_preference_limit\s*=\s*1\b)"));
    static const std::regex kKdc(R"(^\s*kdc\s*=\s*([^\s:]+)(?::(\d+))?\s*$)", std::regex::multiline);
    for (std::sregex_iterator it(krb5.begin(), krb5.end(), kKdc), end; it != end; ++it) {
      const std::string port = (*it)[2].matched ? (*it)[2].str() : "88";
      ports.insert("TCP/" + port);
      if (!tcp_only) ports.insert("UDP/" + port);
    }
  }
  return ports;
}

// The NetworkPolicy selects the daemon's pods, admits the `metrics` port (health listener) only
// from the monitoring namespace and the `http` port (the query API) only from labelled client pods,
// and lets the pods reach DNS, the Kafka brokers and the Thrift2 gateways of configmap.yaml, nothing
// else.
TEST_P(KubernetesManifestSet, NetworkPolicyOpensOnlyWhatTheConfigNeeds) {
  const auto manifests = this->manifests();
  const auto policy = find_kind(manifests, "NetworkPolicy");
  const auto workload = find_kind(manifests, "StatefulSet");
  EXPECT_TRUE(
      labels_match(policy["spec"]["podSelector"]["matchLabels"], workload["spec"]["template"]["metadata"]["labels"]));
  const auto types = policy["spec"]["policyTypes"].as<std::vector<std::string>>();
  EXPECT_EQ(std::set<std::string>(types.begin(), types.end()), (std::set<std::string>{"Ingress", "Egress"}));

  ASSERT_TRUE(policy["spec"]["ingress"].IsSequence());
  std::set<std::string> sources;  // "who -> port"
  for (const auto& rule : policy["spec"]["ingress"]) {
    ASSERT_TRUE(rule["from"].IsSequence() && rule["from"].size() > 0)
        << "an ingress rule without `from` admits everyone";
    ASSERT_TRUE(rule["ports"].IsSequence() && rule["ports"].size() > 0) << "an ingress rule without ports opens all";
    for (const auto& port : rule["ports"]) {
      const auto name = port["port"].as<std::string>("");
      EXPECT_TRUE(name == "metrics" || name == "http") << "only the container's named HTTP ports, not " << name;
      for (const auto& peer : rule["from"]) {
        EXPECT_FALSE(peer["ipBlock"].IsDefined()) << "no address ranges: peers are named";
        if (peer["namespaceSelector"]) {
          EXPECT_FALSE(peer["podSelector"].IsDefined());
          sources.insert("namespace " +
                         peer["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"].as<std::string>("") +
                         " -> " + name);
        } else {
          ASSERT_TRUE(peer["podSelector"]["matchLabels"].IsMap() && peer["podSelector"]["matchLabels"].size() > 0);
          sources.insert("pods -> " + name);
        }
      }
    }
  }
  EXPECT_EQ(sources, (std::set<std::string>{"namespace monitoring -> metrics", "pods -> http"}));

  // Egress: every rule names its peers and ports; together they cover DNS and the config's peers.
  const YAML::Node config = YAML::Load(find_kind(manifests, "ConfigMap")["data"]["hbingest.yaml"].as<std::string>());
  std::set<int> needed = ports_of(config["kafka"]["bootstrap_servers"]);
  const std::set<int> gateways = ports_of(config["hbase"]["endpoints"]);
  needed.insert(gateways.begin(), gateways.end());
  std::set<std::string> allowed;
  for (const auto& rule : policy["spec"]["egress"]) {
    ASSERT_TRUE(rule["to"].IsSequence() && rule["to"].size() > 0) << "an egress rule without `to` allows all";
    ASSERT_TRUE(rule["ports"].IsSequence() && rule["ports"].size() > 0);
    for (const auto& port : rule["ports"]) {
      allowed.insert(port["protocol"].as<std::string>("TCP") + "/" + port["port"].as<std::string>());
    }
  }
  EXPECT_TRUE(allowed.contains("UDP/53") && allowed.contains("TCP/53")) << "DNS";
  for (const int port : needed) EXPECT_TRUE(allowed.contains("TCP/" + std::to_string(port))) << port;
  const std::set<std::string> kdcs = kdc_ports(manifests);
  for (const auto& kdc : kdcs) EXPECT_TRUE(allowed.contains(kdc)) << "the KDCs of krb5.conf: " << kdc;
  EXPECT_EQ(allowed.size(), needed.size() + 2 + kdcs.size()) << "nothing beyond DNS, Kafka, the gateways and the KDCs";
}

// Kubernetes' own OpenAPI schemas, offline: kubernetes-validate (PyPI, stack/requirements.txt)
// ships them. --strict rejects unknown fields too (a misspelt `readinessProbe` would otherwise be
// dropped silently by the API server's older pruning). CRDs (ServiceMonitor, PodMonitor) and the
// Kustomization have no built-in schema: the tests above check them.
std::filesystem::path kubernetes_validate() { return source_dir() / ".venv" / "bin" / "kubernetes-validate"; }

TEST_P(KubernetesManifestSet, BuiltInKindsPassTheKubernetesSchemas) {
  // A missing tool is a failure, not a skip: stack/hbstack fetch installs it.
  ASSERT_TRUE(std::filesystem::exists(kubernetes_validate())) << "run stack/hbstack fetch (stack/requirements.txt)";
  const TempDir dir;
  int validated = 0;
  for (const auto& m : manifests()) {
    const std::string api = m.node["apiVersion"].as<std::string>("");
    if (api.find("monitoring.coreos.com") != std::string::npos || api.find("kustomize") != std::string::npos) continue;
    // The objects as applied (patched, for the Kerberos set), one file each.
    const auto file =
        dir.path() / (std::to_string(validated) + "-" + std::filesystem::path(m.file).filename().string());
    write_file(file, to_json(m.node).dump(2) + "\n");
    const auto result = run({kubernetes_validate().string(), "--strict", file.string()});
    EXPECT_EQ(result.exit_code, 0) << m.file << ":\n" << result.output;
    EXPECT_NE(result.output.find("passed"), std::string::npos) << m.file << ":\n" << result.output;
    ++validated;
  }
  EXPECT_GE(validated, 7);
}

TEST(KubernetesManifests, SchemaValidationReportsAnInjectedMistake) {
  ASSERT_TRUE(std::filesystem::exists(kubernetes_validate()));
  const TempDir dir;
  std::string policy = read_file(manifest_dir() / "networkpolicy.yaml");
  policy.replace(policy.find("policyTypes"), 11, "policyTypess");
  write_file(dir.path() / "networkpolicy.yaml", policy);
  const auto result = run({kubernetes_validate().string(), "--strict", (dir.path() / "networkpolicy.yaml").string()});
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("policyTypess"), std::string::npos) << result.output;
}

// Every Secret a workload mounts (a secret volume, or a projected volume with a Secret in it) is
// mounted read-only with no permission for others: the file modes the kubelet writes come from
// the item's mode or the volume's defaultMode, and Kubernetes' default (0644) counts as
// world-readable.
TEST_P(KubernetesManifestSet, NoSecretIsReadableByOthers) {
  int secret_volumes = 0;
  for (const auto& m : manifests()) {
    const std::string kind = m.node["kind"].as<std::string>("");
    if (kind != "StatefulSet" && kind != "Job") continue;
    const auto pod = m.node["spec"]["template"]["spec"];
    for (const auto& volume : pod["volumes"]) {
      const auto name = volume["name"].as<std::string>();
      std::vector<YAML::Node> items;
      YAML::Node default_mode;
      bool holds_secret = false;
      if (volume["secret"]) {
        holds_secret = true;
        default_mode = volume["secret"]["defaultMode"];
        for (const auto& item : volume["secret"]["items"]) items.push_back(item);
      } else if (volume["projected"]) {
        default_mode = volume["projected"]["defaultMode"];
        for (const auto& source : volume["projected"]["sources"]) {
          holds_secret = holds_secret || source["secret"].IsDefined();
          const auto ref = source["secret"] ? source["secret"] : source["configMap"];
          for (const auto& item : ref["items"]) items.push_back(item);
        }
      }
      if (!holds_secret) continue;
      ++secret_volumes;
      SCOPED_TRACE(m.file + ": volume " + name);
      ASSERT_TRUE(default_mode.IsDefined()) << "without defaultMode the files are 0644";
      EXPECT_EQ(file_mode(default_mode) & 07, 0) << "defaultMode " << default_mode.as<std::string>();
      for (const auto& item : items) {
        if (item["mode"]) {
          EXPECT_EQ(file_mode(item["mode"]) & 07, 0) << item["key"].as<std::string>();
        }
      }
      for (const auto& container : pod["containers"]) {
        for (const auto& mount : container["volumeMounts"]) {
          if (mount["name"].as<std::string>() == name) {
            EXPECT_TRUE(mount["readOnly"].as<bool>(false)) << "mount";
          }
        }
      }
      // The kubelet gives the files to the pod's fsGroup (mode | 0440): without one, the non-root
      // daemon could not read a root-owned 0400 keytab.
      EXPECT_GT(pod["securityContext"]["fsGroup"].as<int>(0), 0);
    }
  }
  EXPECT_GE(secret_volumes, 2) << "the StatefulSet and the Job each mount secrets";
}

INSTANTIATE_TEST_SUITE_P(Sets, KubernetesManifestSet, ::testing::Values("base", "kerberos"),
                         [](const ::testing::TestParamInfo<std::string>& set) { return set.param; });

// The container that `kind` runs in the Kerberos set, with its pod.
std::pair<YAML::Node, YAML::Node> kerberized_workload(const std::vector<Manifest>& manifests, const std::string& kind) {
  const auto workload = find_kind(manifests, kind);
  return {workload["spec"]["template"]["spec"], container_of(workload)};
}

YAML::Node volume_named(const YAML::Node& pod, const std::string& name) {
  for (const auto& volume : pod["volumes"]) {
    if (volume["name"].as<std::string>() == name) return volume;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

// The keytab: its own Secret volume, owner-read (0400), read-only, and the path both links' config
// names is a file of that volume; KRB5_CONFIG names the krb5.conf of the ConfigMap, which keeps
// the host names as configured. Both in the StatefulSet and in the bootstrap Job.
TEST(KubernetesKerberos, KeytabAndKrb5ConfReachTheDaemonAsTheConfigNamesThem) {
  const auto manifests = kerberized_manifests();
  const YAML::Node config =
      YAML::Load(find_object(manifests, "ConfigMap", "hbingest-config")["data"]["hbingest.yaml"].as<std::string>());
  const auto sasl = config["hbase"]["sasl"];
  EXPECT_EQ(sasl["mechanism"].as<std::string>(""), "GSSAPI");
  EXPECT_EQ(sasl["qop"].as<std::string>(""), "privacy") << "encrypted: no TLS terminator in front of the gateways";
  EXPECT_EQ(config["hbase"]["transport"].as<std::string>(""), "buffered")
      << "HBase's SASL needs the buffered transport";
  const auto kafka = config["kafka"]["properties"];
  EXPECT_EQ(kafka["sasl.mechanisms"].as<std::string>(""), "GSSAPI");
  EXPECT_EQ(kafka["security.protocol"].as<std::string>(""), "SASL_SSL");
  EXPECT_EQ(kafka["sasl.kerberos.keytab"].as<std::string>(""), sasl["keytab"].as<std::string>(""));
  EXPECT_EQ(kafka["sasl.kerberos.principal"].as<std::string>(""), sasl["principal"].as<std::string>(""));
  const std::filesystem::path keytab = sasl["keytab"].as<std::string>("");

  const std::string krb5 = find_object(manifests, "ConfigMap", "hbingest-krb5")["data"]["krb5.conf"].as<std::string>();
  for (const char* setting : {R"(dns_canonicalize_hostname\s*=\s*false)", R"(rdns\s*=\s*false)"}) {
    EXPECT_TRUE(std::regex_search(krb5, std::regex(setting))) << "krb5.conf: " << setting;
  }

  for (const char* kind : {"StatefulSet", "Job"}) {
    SCOPED_TRACE(kind);
    const auto [pod, container] = kerberized_workload(manifests, kind);
    std::string keytab_volume, krb5_config;
    for (const auto& mount : container["volumeMounts"]) {
      if (mount["mountPath"].as<std::string>() == keytab.parent_path().string()) {
        keytab_volume = mount["name"].as<std::string>();
        EXPECT_TRUE(mount["readOnly"].as<bool>(false));
      }
    }
    ASSERT_FALSE(keytab_volume.empty()) << "nothing mounted at " << keytab.parent_path();
    const auto secret = volume_named(pod, keytab_volume)["secret"];
    ASSERT_TRUE(secret.IsMap()) << "the keytab is a Secret volume of its own";
    EXPECT_EQ(file_mode(secret["defaultMode"]), 0400);
    bool item_found = false;
    for (const auto& item : secret["items"]) {
      item_found = item_found || item["path"].as<std::string>() == keytab.filename().string();
      EXPECT_FALSE(item["mode"].IsDefined()) << "defaultMode applies";
    }
    EXPECT_TRUE(item_found) << keytab << " is not an item of " << secret["secretName"];
    EXPECT_EQ(pod["securityContext"]["fsGroup"].as<int>(0), pod["securityContext"]["runAsGroup"].as<int>(-1))
        << "the keytab is readable through the daemon's own group";

    for (const auto& var : container["env"]) {
      if (var["name"].as<std::string>() == "KRB5_CONFIG") krb5_config = var["value"].as<std::string>();
    }
    ASSERT_FALSE(krb5_config.empty()) << "KRB5_CONFIG";
    bool krb5_mounted = false;
    for (const auto& mount : container["volumeMounts"]) {
      const auto config_map = volume_named(pod, mount["name"].as<std::string>())["configMap"];
      if (!config_map || config_map["name"].as<std::string>() != "hbingest-krb5") continue;
      for (const auto& item : config_map["items"]) {
        krb5_mounted =
            krb5_mounted || mount["mountPath"].as<std::string>() + "/" + item["path"].as<std::string>() == krb5_config;
      }
    }
    EXPECT_TRUE(krb5_mounted) << "KRB5_CONFIG " << krb5_config << " is not the mounted krb5.conf";
  }
}

// The component's files: every resource and patch exists, and the patches' kinds and names are the
// targets' (kustomize ignores them with a target, but a reader should not be misled).
TEST(KubernetesKerberos, ComponentFilesExistAndNameTheirTargets) {
  const YAML::Node component = YAML::LoadFile((kerberos_dir() / "kustomization.yaml").string());
  for (const auto& resource : component["resources"]) {
    EXPECT_TRUE(std::filesystem::is_regular_file(kerberos_dir() / resource.as<std::string>())) << resource;
  }
  for (const auto& patch : component["patches"]) {
    const auto file = kerberos_dir() / patch["path"].as<std::string>();
    ASSERT_TRUE(std::filesystem::is_regular_file(file)) << file;
    const YAML::Node body = YAML::LoadFile(file.string());
    if (body.IsSequence()) continue;  // a JSON patch names no object
    EXPECT_EQ(body["kind"].as<std::string>(""), patch["target"]["kind"].as<std::string>()) << file;
    EXPECT_EQ(body["metadata"]["name"].as<std::string>(""), patch["target"]["name"].as<std::string>()) << file;
  }
  EXPECT_NO_THROW(kerberized_manifests());
}

// The component replaces the whole config (kustomize cannot patch inside a ConfigMap's text): apart
// from the links' settings it must stay the base's, so a change to one is not forgotten in the other.
TEST(KubernetesKerberos, ConfigDiffersFromTheBaseOnlyInTheLinks) {
  const auto config_of = [](const std::vector<Manifest>& manifests) {
    return to_json(
        YAML::Load(find_object(manifests, "ConfigMap", "hbingest-config")["data"]["hbingest.yaml"].as<std::string>()));
  };
  nlohmann::json base = config_of(load_manifests());
  nlohmann::json kerberos = config_of(kerberized_manifests());
  for (auto* config : {&base, &kerberos}) {
    (*config)["kafka"].erase("bootstrap_servers");
    for (const char* key : {"endpoints", "transport", "sasl", "tls", "framed_max_frame_bytes"}) {
      (*config)["hbase"].erase(key);
    }
    auto& properties = (*config)["kafka"]["properties"];
    for (auto it = properties.begin(); it != properties.end();) {
      const std::string& key = it.key();
      it = key.starts_with("security.") || key.starts_with("ssl.") || key.starts_with("sasl.") ? properties.erase(it)
                                                                                               : std::next(it);
    }
  }
  EXPECT_EQ(kerberos.dump(2), base.dump(2));
}

}  // namespace
}  // namespace hbingest::deploy_test
