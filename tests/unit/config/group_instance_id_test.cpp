#include "hbingest/config/group_instance_id.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hbingest/config/loader.h"

namespace hbingest::config {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;
using ::testing::SizeIs;

std::string with_id(const std::string& line) {
  return "kafka:\n  bootstrap_servers: b:9092\n  topics: [events]\n" + line +
         "\nhbase:\n  endpoints: [h:9090]\nroutes:\n  - {event_types: [login], table: events, preset: events}\n";
}

std::vector<std::string> id_problems(const std::string& yaml) {
  return try_load_config_text(yaml, "test.yaml").problems;
}

TEST(GroupInstanceId, KafkasRule) {
  EXPECT_EQ(group_instance_id_problem("hbingest-0"), std::nullopt);
  EXPECT_EQ(group_instance_id_problem("A.b_c-9"), std::nullopt);
  EXPECT_EQ(group_instance_id_problem(std::string(249, 'x')), std::nullopt);
  EXPECT_THAT(group_instance_id_problem(""), Optional(HasSubstr("empty")));
  EXPECT_THAT(group_instance_id_problem("."), Optional(HasSubstr("\".\" or \"..\"")));
  EXPECT_THAT(group_instance_id_problem(".."), Optional(HasSubstr("\".\" or \"..\"")));
  EXPECT_THAT(group_instance_id_problem(std::string(250, 'x')), Optional(HasSubstr("at most 249")));
  for (const std::string& bad :
       std::vector<std::string>{"a b", "a/b", "a:b", "ü", std::string("a\0b", 3), "a\nb", "a*"}) {
    EXPECT_THAT(group_instance_id_problem(bad), Optional(HasSubstr("only ASCII letters"))) << bad;
  }
}

TEST(GroupInstanceId, DeploymentPodNamesAreRecognized) {
  // Names as Kubernetes generates them: <deployment>-<pod-template-hash>-<5 characters>.
  EXPECT_TRUE(looks_like_deployment_pod_name("hbingest-7d9c5b8f6-x2kqz"));
  EXPECT_TRUE(looks_like_deployment_pod_name("hbingest-events-5f7b9d4c8d-9rm2t"));
  EXPECT_TRUE(looks_like_deployment_pod_name("a-6c8b4d7f9b-wz2gh"));
  // StatefulSet pods, ordinary hosts, and near misses (a vowel or a 0/1/3 never appears in a
  // generated part; the suffix is exactly five characters).
  for (const char* stable : {"hbingest-0", "hbingest-12", "ingest01.example.com", "localhost", "hbingest",
                             "web-7d9c5b8f6-x2kqa", "web-7d9c5b8f6-x2kq", "web-7d9c5b8f6-x2kqzz", "web-7d9c0b8f6-x2kqz",
                             "7d9c5b8f6-x2kqz", "-7d9c5b8f6-x2kqz", "web-bcd-x2kqz", "web--x2kqz", ""}) {
    EXPECT_FALSE(looks_like_deployment_pod_name(stable)) << stable;
  }
}

TEST(GroupInstanceId, DeploymentPodNamesTruncatedByKubernetesAreRecognizedToo) {
  // Kubernetes cuts a generated name's base ("<replicaset>-") to 58 characters before it appends
  // the 5 random ones (apimachinery's names.SimpleNameGenerator), so a Deployment named with 47
  // characters or more gets pods whose (cut) hash runs into the random part without a dash. Such a
  // pod name changes with every restart too.
  const std::string deployment = "hbingest-kafka-to-hbase-ingest-production-eu-w1";  // 47 characters
  const auto pod_name = [](const std::string& replicaset) {
    std::string base = replicaset + "-";
    if (base.size() > 58) base.resize(58);
    return base + "9rm2t";
  };
  EXPECT_TRUE(looks_like_deployment_pod_name(pod_name(deployment + "-5f7b9d4c8d")))
      << pod_name(deployment + "-5f7b9d4c8d");
  const std::string longer = deployment + "-and-more";  // the hash cut to one character
  EXPECT_TRUE(looks_like_deployment_pod_name(pod_name(longer + "-5f7b9d4c8d"))) << pod_name(longer + "-5f7b9d4c8d");
  // 63 characters but no generated tail, or a StatefulSet's ordinal: stable names.
  EXPECT_FALSE(looks_like_deployment_pod_name(std::string(58, 'a') + "abcde"));
  EXPECT_FALSE(looks_like_deployment_pod_name(std::string(49, 'a') + "-statefulset-0"));
  EXPECT_FALSE(looks_like_deployment_pod_name(std::string(44, 'a') + "-vowels-in-itx9rm2t"));
}

TEST(GroupInstanceId, Resolution) {
  EXPECT_EQ(resolve_group_instance_id("", "host"), "");
  EXPECT_EQ(resolve_group_instance_id("auto", "hbingest-2"), "hbingest-2");
  EXPECT_EQ(resolve_group_instance_id("ingest-a", "hbingest-2"), "ingest-a");
  EXPECT_FALSE(host_name().empty());
}

TEST(GroupInstanceId, OffByDefault) {
  const auto loaded = try_load_config_text(with_id(""), "test.yaml");
  ASSERT_THAT(loaded.problems, IsEmpty());
  EXPECT_EQ(loaded.config.kafka.group_instance_id, "");
}

TEST(GroupInstanceId, ValuesLoadAndBadOnesNameTheLine) {
  EXPECT_EQ(try_load_config_text(with_id("  group_instance_id: ingest-a"), "t.yaml").config.kafka.group_instance_id,
            "ingest-a");
  EXPECT_THAT(id_problems(with_id("  group_instance_id: \"\"")), IsEmpty());
  const auto problems = id_problems(with_id("  group_instance_id: \"pod 1\""));
  EXPECT_THAT(problems, ElementsAre(AllOf(HasSubstr("test.yaml:4:"), HasSubstr("kafka.group_instance_id"),
                                          HasSubstr("'pod 1'"), HasSubstr("only ASCII letters"))));
  EXPECT_THAT(id_problems(with_id("  group_instance_id: " + std::string(250, 'x'))),
              ElementsAre(AllOf(HasSubstr("test.yaml:4:"), HasSubstr("at most 249"))));
  EXPECT_THAT(id_problems(with_id("  group_instance_id: [a]")), SizeIs(1));
}

TEST(GroupInstanceId, AutoTakesThisHostsName) {
  // This host's name decides; a test host is neither an invalid id nor a Deployment pod.
  ASSERT_EQ(group_instance_id_problem(host_name()), std::nullopt);
  ASSERT_FALSE(looks_like_deployment_pod_name(host_name()));
  const auto loaded = try_load_config_text(with_id("  group_instance_id: auto"), "test.yaml");
  EXPECT_THAT(loaded.problems, IsEmpty());
  EXPECT_EQ(loaded.config.kafka.group_instance_id, "auto");
}

TEST(GroupInstanceId, PropertyIsRefused) {
  const auto problems = id_problems(with_id("  properties:\n    group.instance.id: x"));
  EXPECT_THAT(problems, ElementsAre(AllOf(HasSubstr("test.yaml:5:"), HasSubstr("kafka.properties.group.instance.id"),
                                          HasSubstr("set kafka.group_instance_id instead"))));
}

}  // namespace
}  // namespace hbingest::config
