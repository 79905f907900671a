// deploy/kubernetes/: every manifest parses and names itself, the Deployment probes the endpoints
// the daemon serves, outlives its drain, runs locked down, and the ConfigMap + Secret it projects
// into /etc/hbingest form a config that `hbingest check-config` accepts.

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <regex>
#include <set>

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
  for (const char* kind : {"apps/v1/Deployment", "v1/ConfigMap", "v1/Secret", "v1/Service",
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

  // The whole shutdown fits in shutdown_deadline; the daemon's backstop (app/signals.h,
  // SignalWatcher::kStopGrace) ends it 5 s later at the latest. SIGKILL must come after both.
  const double budget = duration_seconds(effective["shutdown_deadline"].as<std::string>()) + 5;
  EXPECT_GT(pod["terminationGracePeriodSeconds"].as<double>(0), budget)
      << "SIGKILL would cut the shutdown short: keep terminationGracePeriodSeconds above shutdown_deadline + 5 s";
}

}  // namespace
}  // namespace hbingest::deploy_test
