// deploy/kubernetes/: every manifest parses, names itself and passes Kubernetes' own schemas
// (kubernetes-validate, offline), the Deployment probes the endpoints the daemon serves, outlives
// its drain, runs locked down, the NetworkPolicy opens only what the config needs, the example
// Secret is never applied, and the ConfigMap + Secret it projects into /etc/hbingest form a config
// that `hbingest check-config` accepts.

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

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

// Writes the Deployment's projected config volume into `root` as the kubelet would: ConfigMap
// data and Secret stringData under their item paths.
void materialize_projected_volume(const std::vector<Manifest>& manifests, const YAML::Node& volume,
                                  const std::filesystem::path& root) {
  for (const auto& source : volume["projected"]["sources"]) {
    const bool is_config_map = source["configMap"].IsDefined();
    const YAML::Node ref = is_config_map ? source["configMap"] : source["secret"];
    const std::string name = ref["name"].as<std::string>();
    const YAML::Node* object = nullptr;
    for (const auto& m : manifests) {
      if (m.node["kind"].as<std::string>("") == (is_config_map ? "ConfigMap" : "Secret") &&
          m.node["metadata"]["name"].as<std::string>("") == name) {
        object = &m.node;
      }
    }
    ASSERT_NE(object, nullptr) << "the config volume projects " << name << ", which no manifest defines";
    const YAML::Node data = is_config_map ? (*object)["data"] : (*object)["stringData"];
    ASSERT_TRUE(ref["items"].IsSequence()) << name << ": list the projected items";
    for (const auto& item : ref["items"]) {
      const std::string key = item["key"].as<std::string>();
      ASSERT_TRUE(data[key].IsScalar()) << name << " has no key " << key;
      write_file(root / item["path"].as<std::string>(), data[key].as<std::string>());
    }
  }
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
       {"apps/v1/Deployment", "v1/ConfigMap", "v1/Secret", "v1/Service", "networking.k8s.io/v1/NetworkPolicy",
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
// Deployment names a Secret the operator creates (docs/operations.md).
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

TEST(KubernetesManifests, DeploymentProbesTheDaemonEndpoints) {
  const auto manifests = load_manifests();
  const auto container = container_of(find_kind(manifests, "Deployment"));
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

TEST(KubernetesManifests, DeploymentRunsLockedDownWithResources) {
  const auto manifests = load_manifests();
  for (const char* kind : {"Deployment", "Job"}) {
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

TEST(KubernetesManifests, SelectorsConnectServiceMonitorsAndBudget) {
  const auto manifests = load_manifests();
  const auto deployment = find_kind(manifests, "Deployment");
  const auto pod_labels = deployment["spec"]["template"]["metadata"]["labels"];
  EXPECT_TRUE(labels_match(deployment["spec"]["selector"]["matchLabels"], pod_labels));
  const auto service = find_kind(manifests, "Service");
  EXPECT_TRUE(labels_match(service["spec"]["selector"], pod_labels));
  EXPECT_TRUE(labels_match(find_kind(manifests, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"], pod_labels));
  std::set<std::string> container_ports;
  for (const auto& port : container_of(deployment)["ports"]) container_ports.insert(port["name"].as<std::string>(""));
  std::set<std::string> service_ports;
  for (const auto& port : service["spec"]["ports"]) {
    service_ports.insert(port["name"].as<std::string>(""));
    EXPECT_TRUE(container_ports.contains(port["targetPort"].as<std::string>(""))) << port["name"];
  }
  // http.metrics_auth: every monitor sends the query token from the Secret the Deployment mounts.
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

// The real check: the ConfigMap's config with the Secret's files, as the pod sees them.
TEST(KubernetesManifests, ConfigMapConfigPassesCheckConfigAndFitsTheDeployment) {
  const auto manifests = load_manifests();
  const auto deployment = find_kind(manifests, "Deployment");
  const auto pod = deployment["spec"]["template"]["spec"];
  const auto container = container_of(deployment);

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

  const TempDir dir;
  materialize_projected_volume(manifests, volume, dir.path());
  if (HasFatalFailure()) return;
  std::map<std::string, std::string> env;
  for (const auto& var : container["env"]) {
    if (var["value"].IsDefined()) env[var["name"].as<std::string>()] = var["value"].as<std::string>();
  }
  const auto config_file = dir.path() / config_in_pod.filename();
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

// The NetworkPolicy selects the daemon's pods, admits the `metrics` port (health listener) only
// from the monitoring namespace and the `http` port (the query API) only from labelled client pods,
// and lets the pods reach DNS, the Kafka brokers and the Thrift2 gateways of configmap.yaml, nothing
// else.
TEST(KubernetesManifests, NetworkPolicyOpensOnlyWhatTheConfigNeeds) {
  const auto manifests = load_manifests();
  const auto policy = find_kind(manifests, "NetworkPolicy");
  const auto deployment = find_kind(manifests, "Deployment");
  EXPECT_TRUE(
      labels_match(policy["spec"]["podSelector"]["matchLabels"], deployment["spec"]["template"]["metadata"]["labels"]));
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
  EXPECT_EQ(allowed.size(), needed.size() + 2) << "nothing beyond DNS, Kafka and the gateways";
}

// Kubernetes' own OpenAPI schemas, offline: kubernetes-validate (PyPI, stack/requirements.txt)
// ships them. --strict rejects unknown fields too (a misspelt `readinessProbe` would otherwise be
// dropped silently by the API server's older pruning). CRDs (ServiceMonitor, PodMonitor) and the
// Kustomization have no built-in schema: the tests above check them.
std::filesystem::path kubernetes_validate() { return source_dir() / ".venv" / "bin" / "kubernetes-validate"; }

TEST(KubernetesManifests, BuiltInKindsPassTheKubernetesSchemas) {
  // A missing tool is a failure, not a skip: stack/hbstack fetch installs it.
  ASSERT_TRUE(std::filesystem::exists(kubernetes_validate())) << "run stack/hbstack fetch (stack/requirements.txt)";
  int validated = 0;
  for (const auto& m : load_manifests()) {
    const std::string api = m.node["apiVersion"].as<std::string>("");
    if (api.find("monitoring.coreos.com") != std::string::npos || api.find("kustomize") != std::string::npos) continue;
    const auto result = run({kubernetes_validate().string(), "--strict", (manifest_dir() / m.file).string()});
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

}  // namespace
}  // namespace hbingest::deploy_test
