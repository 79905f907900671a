// The HTTP client of the Confluent REST API against a real socket: an httplib::Server on an
// ephemeral port of 127.0.0.1 that answers as a registry would, or as a broken one would.
#include "hbingest/connectors/http_schema_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace hbingest::connectors {
namespace {

using namespace std::chrono_literals;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kBase = "/apis/ccompat/v7";
constexpr const char* kPassword = "pa55-w0rd-in-no-message";

class FakeRegistry {
 public:
  FakeRegistry() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() is a no-op until the accept loop runs: a test that never calls the server would
    // otherwise stop it too early and wait forever in join().
    for (int i = 0; i < 5000 && !server_.is_running(); ++i) std::this_thread::sleep_for(1ms);
    if (!server_.is_running()) ADD_FAILURE() << "the fake registry did not start";
  }
  ~FakeRegistry() {
    release();
    server_.stop();
    thread_.join();
  }
  FakeRegistry(const FakeRegistry&) = delete;
  FakeRegistry& operator=(const FakeRegistry&) = delete;

  httplib::Server& server() { return server_; }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + kBase; }

  // For handlers that must outlast the client's timeout: they wait here until the test ends.
  void hold() {
    std::unique_lock lock(mutex_);
    released_cv_.wait(lock, [this] { return released_; });
  }
  bool held_for(std::chrono::milliseconds d) {
    std::unique_lock lock(mutex_);
    return !released_cv_.wait_for(lock, d, [this] { return released_; });
  }
  void release() {
    {
      std::lock_guard lock(mutex_);
      released_ = true;
    }
    released_cv_.notify_all();
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable released_cv_;
  bool released_ = false;
};

class HttpSchemaRegistryTest : public ::testing::Test {
 protected:
  std::unique_ptr<SchemaRegistry> client(std::chrono::milliseconds timeout = 2s,
                                         std::size_t max_bytes = std::size_t{16} << 20) {
    HttpSchemaRegistryOptions options;
    options.url = registry_.url();
    options.timeout = timeout;
    options.max_response_bytes = max_bytes;
    options.basic_auth_user = "hbingest";
    options.basic_auth_password = kPassword;
    return make_http_schema_registry(options);
  }

  void answer(const std::string& pattern, int status, std::string body) {
    registry_.server().Get(pattern, [status, body](const httplib::Request&, httplib::Response& res) {
      res.status = status;
      res.set_content(body, "application/vnd.schemaregistry.v1+json");
    });
  }

  template <typename Exception>
  std::string message_of(const std::function<void()>& call) {
    try {
      call();
    } catch (const Exception& e) {
      return e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw another kind: " << e.what();
      return {};
    }
    ADD_FAILURE() << "did not throw";
    return {};
  }

  FakeRegistry registry_;
};

TEST_F(HttpSchemaRegistryTest, ReadsASchemaByIdWithoutTypeAsAvroAndSendsCredentials) {
  std::string authorization;
  registry_.server().Get(std::string(kBase) + "/schemas/ids/7",
                         [&](const httplib::Request& req, httplib::Response& res) {
                           authorization = req.get_header_value("Authorization");
                           res.set_content(R"({"schema":"{\"type\":\"string\"}","references":[]})", "application/json");
                         });
  const RegisteredSchema schema = client()->schema_by_id(7);
  EXPECT_EQ(schema.id, 7);
  EXPECT_EQ(schema.type, SchemaType::avro);
  EXPECT_EQ(schema.text, R"({"type":"string"})");
  EXPECT_TRUE(schema.references.empty());
  // base64("hbingest:pa55-w0rd-in-no-message")
  EXPECT_EQ(authorization, "Basic aGJpbmdlc3Q6cGE1NS13MHJkLWluLW5vLW1lc3NhZ2U=");
}

TEST_F(HttpSchemaRegistryTest, AProxyNamedInTheEnvironmentIsNotUsed) {
  // No option of ours names a proxy; one in the environment would see an http:// registry's
  // credentials. Here it is a port nobody listens on: used, the fetch would fail.
  answer(std::string(kBase) + "/schemas/ids/1", 200, R"({"schema":"s"})");
  const std::string dead = "http://127.0.0.1:1";
  for (const char* name : {"http_proxy", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"}) ::setenv(name, dead.c_str(), 1);
  std::string text;
  EXPECT_NO_THROW(text = client()->schema_by_id(1).text);
  for (const char* name : {"http_proxy", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"}) ::unsetenv(name);
  EXPECT_EQ(text, "s");
}

TEST_F(HttpSchemaRegistryTest, ReadsProtobufWithReferencesBySubjectVersionEncodingTheSubject) {
  std::string target;
  registry_.server().Get(".*", [&](const httplib::Request& req, httplib::Response& res) {
    target = req.target;
    res.set_content(R"({"id":12,"subject":"x","version":3,"schemaType":"PROTOBUF","schema":"syntax = \"proto3\";",
                        "references":[{"name":"common/money.proto","subject":"money","version":2}]})",
                    "application/json");
  });
  const RegisteredSchema schema = client()->schema_by_subject_version("orders/v1 ?#%", 3);
  EXPECT_EQ(target, std::string(kBase) + "/subjects/orders%2Fv1%20%3F%23%25/versions/3");
  EXPECT_EQ(schema.id, 12);
  EXPECT_EQ(schema.type, SchemaType::protobuf);
  EXPECT_EQ(schema.text, R"(syntax = "proto3";)");
  ASSERT_EQ(schema.references.size(), 1u);
  EXPECT_EQ(schema.references[0].name, "common/money.proto");
  EXPECT_EQ(schema.references[0].subject, "money");
  EXPECT_EQ(schema.references[0].version, 2);
  // "." and ".." are subjects like any other, not steps in the path.
  client()->schema_by_subject_version("..", 3);
  EXPECT_EQ(target, std::string(kBase) + "/subjects/../versions/3");
}

TEST_F(HttpSchemaRegistryTest, TheApisNotFoundCodesAreSchemaNotFoundNamingUrlAndId) {
  answer(std::string(kBase) + "/schemas/ids/42", 404, R"({"error_code":40403,"message":"No content with id 42"})");
  answer(std::string(kBase) + "/subjects/gone/versions/1", 404,
         R"({"error_code":40401,"message":"Subject not found"})");
  answer(std::string(kBase) + "/subjects/s/versions/9", 404, R"({"error_code":40402,"message":"Version not found"})");
  auto registry = client();
  EXPECT_THAT(message_of<SchemaNotFound>([&] { registry->schema_by_id(42); }),
              AllOf(HasSubstr(registry_.url()), HasSubstr("schema id 42"), HasSubstr("40403")));
  EXPECT_THAT(message_of<SchemaNotFound>([&] { registry->schema_by_subject_version("gone", 1); }),
              AllOf(HasSubstr("subject 'gone' version 1"), HasSubstr("40401")));
  EXPECT_THAT(message_of<SchemaNotFound>([&] { registry->schema_by_subject_version("s", 9); }), HasSubstr("40402"));
}

TEST_F(HttpSchemaRegistryTest, A404WithoutTheApisCodeIsAWrongUrlNotAMissingSchema) {
  // What Apicurio answers for a path outside its API (the url missing /apis/ccompat/v7).
  answer(std::string(kBase) + "/schemas/ids/1", 404, R"({"error_code":404,"message":"Could not find resource"})");
  answer(std::string(kBase) + "/schemas/ids/2", 404, "<html>Not Found</html>");
  auto registry = client();
  EXPECT_THAT(message_of<SchemaRegistryUnavailable>([&] { registry->schema_by_id(1); }),
              AllOf(HasSubstr("schema id 1"), HasSubstr("answered 404"), HasSubstr("is the url the API's base")));
  EXPECT_THAT(message_of<SchemaRegistryUnavailable>([&] { registry->schema_by_id(2); }), HasSubstr("answered 404"));
}

TEST_F(HttpSchemaRegistryTest, ServerErrorsAndRefusedCredentialsAreUnavailableWithoutThePassword) {
  answer(std::string(kBase) + "/schemas/ids/1", 500, R"({"error_code":50001,"message":"store down"})");
  answer(std::string(kBase) + "/schemas/ids/2", 401,
         std::string(R"({"error_code":401,"message":"bad password )") + kPassword + "\"}");
  answer(std::string(kBase) + "/schemas/ids/3", 403, "forbidden");
  answer(std::string(kBase) + "/schemas/ids/4", 302, "");
  auto registry = client();
  EXPECT_THAT(
      message_of<SchemaRegistryUnavailable>([&] { registry->schema_by_id(1); }),
      AllOf(HasSubstr(registry_.url()), HasSubstr("schema id 1"), HasSubstr("answered 500"), HasSubstr("store down")));
  const std::string refused = message_of<SchemaRegistryUnavailable>([&] { registry->schema_by_id(2); });
  EXPECT_THAT(refused, AllOf(HasSubstr("credentials refused"), HasSubstr("schema id 2"), Not(HasSubstr(kPassword))));
  EXPECT_THAT(message_of<SchemaRegistryUnavailable>([&] { registry->schema_by_id(3); }),
              HasSubstr("credentials refused"));
  EXPECT_THAT(message_of<SchemaRegistryUnavailable>([&] { registry->schema_by_id(4); }), HasSubstr("answered 302"));
}

TEST_F(HttpSchemaRegistryTest, APasswordEchoedWhereTheMessageIsCutIsNotHalfShown) {
  // The registry's message is quoted up to a bound: a password straddling it must not leave its
  // first half in ours.
  const std::string echoed = std::string(290, 'x') + " " + kPassword;
  answer(std::string(kBase) + "/schemas/ids/1", 401, R"({"error_code":401,"message":")" + echoed + "\"}");
  EXPECT_THAT(message_of<SchemaRegistryUnavailable>([&] { client()->schema_by_id(1); }),
              AllOf(HasSubstr("credentials refused"), Not(HasSubstr(std::string(kPassword).substr(0, 6)))));
}

TEST_F(HttpSchemaRegistryTest, AnswersThatAreNotTheApisAreUnavailable) {
  answer(std::string(kBase) + "/schemas/ids/1", 200, "<html>a login page</html>");
  answer(std::string(kBase) + "/schemas/ids/2", 200, R"(["schema"])");
  answer(std::string(kBase) + "/schemas/ids/3", 200, R"({"schema":17})");
  answer(std::string(kBase) + "/schemas/ids/4", 200, R"({"schema":"x","references":[{"name":"a"}]})");
  answer(std::string(kBase) + "/schemas/ids/5", 200, R"({"schema":"x","schemaType":7})");
  answer(std::string(kBase) + "/schemas/ids/6", 200, std::string(100000, '[') + std::string(100000, ']'));
  auto registry = client();
  for (const std::int32_t id : {1, 2, 3, 4, 5, 6}) {
    EXPECT_THAT(message_of<SchemaRegistryUnavailable>([&] { registry->schema_by_id(id); }),
                HasSubstr("schema id " + std::to_string(id)));
  }
}

TEST_F(HttpSchemaRegistryTest, ASchemaOfAKindNoFormatReadsIsADefiniteNo) {
  answer(std::string(kBase) + "/schemas/ids/1", 200, R"({"schema":"<xs:schema/>","schemaType":"XML"})");
  EXPECT_THAT(message_of<SchemaNotFound>([&] { client()->schema_by_id(1); }), HasSubstr("'XML'"));
}

TEST_F(HttpSchemaRegistryTest, AHugeAnswerIsAbandonedAtTheLimit) {
  constexpr std::size_t kLimit = 64 * 1024;
  // Declared up front: refused before a byte of the body is read.
  registry_.server().Get(std::string(kBase) + "/schemas/ids/1", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content_provider(std::size_t{2} << 30, "application/json",
                             [&](std::size_t, std::size_t length, httplib::DataSink& sink) {
                               const std::string chunk(std::min<std::size_t>(length, 1 << 16), ' ');
                               return sink.write(chunk.data(), chunk.size());
                             });
  });
  // Chunked, no length: cut off once past the limit.
  registry_.server().Get(std::string(kBase) + "/schemas/ids/2", [&](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("application/json", [&](std::size_t, httplib::DataSink& sink) {
      const std::string chunk(1 << 14, ' ');
      return sink.write(chunk.data(), chunk.size());
    });
  });
  auto registry = client(2s, kLimit);
  EXPECT_THAT(message_of<SchemaRegistryUnavailable>([&] { registry->schema_by_id(1); }),
              AllOf(HasSubstr("2147483648 bytes"), HasSubstr("limit")));
  EXPECT_THAT(message_of<SchemaRegistryUnavailable>([&] { registry->schema_by_id(2); }),
              AllOf(HasSubstr("schema id 2"), HasSubstr("over the limit of 65536")));
}

TEST_F(HttpSchemaRegistryTest, ASilentRegistryTimesOut) {
  registry_.server().Get(std::string(kBase) + "/schemas/ids/1", [&](const httplib::Request&, httplib::Response& res) {
    registry_.hold();
    res.set_content("{}", "application/json");
  });
  // The handler holds until the test ends: returning at all proves the timeout.
  EXPECT_THAT(message_of<SchemaRegistryUnavailable>([&] { client(200ms)->schema_by_id(1); }),
              AllOf(HasSubstr("schema id 1"), HasSubstr("200 ms")));
}

TEST_F(HttpSchemaRegistryTest, ARegistryDribblingItsAnswerTimesOut) {
  // One byte at a time, each well within the per-read timeout, never ending.
  registry_.server().Get(std::string(kBase) + "/schemas/ids/1", [&](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("application/json", [&](std::size_t, httplib::DataSink& sink) {
      if (!registry_.held_for(20ms)) return false;
      return sink.write(" ", 1);
    });
  });
  EXPECT_THAT(message_of<SchemaRegistryUnavailable>([&] { client(300ms)->schema_by_id(1); }),
              AllOf(HasSubstr("schema id 1"), HasSubstr("no complete answer within 300 ms")));
}

TEST_F(HttpSchemaRegistryTest, NoRegistryListeningIsUnavailable) {
  HttpSchemaRegistryOptions options;
  options.url = "http://127.0.0.1:1/registry";
  options.timeout = 500ms;
  const auto registry = make_http_schema_registry(options);
  EXPECT_THAT(message_of<SchemaRegistryUnavailable>([&] { registry->schema_by_id(5); }),
              AllOf(HasSubstr("http://127.0.0.1:1/registry"), HasSubstr("schema id 5"), HasSubstr("connect")));
}

TEST_F(HttpSchemaRegistryTest, ConcurrentCallsEachGetTheirOwnAnswer) {
  registry_.server().Get(std::string(kBase) + R"(/schemas/ids/(\d+))",
                         [](const httplib::Request& req, httplib::Response& res) {
                           res.set_content(R"({"schema":")" + req.matches[1].str() + R"("})", "application/json");
                         });
  auto registry = client();
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        const int id = t * 100 + i;
        if (registry->schema_by_id(id).text != std::to_string(id)) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong, 0);
}

// A registry below HTTP: a socket on 127.0.0.1 that reads the request, then writes what `next`
// gives (until it gives "" or the client goes away). httplib::Server cannot misbehave before the
// end of the headers, which is where these attacks are.
class RawRegistry {
 public:
  explicit RawRegistry(std::function<std::string()> next) : next_(std::move(next)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), length) != 0 || ::listen(listener_, 1) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      ADD_FAILURE() << "the raw registry did not start";
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~RawRegistry() {
    stop_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    if (const int connection = connection_.load(); connection >= 0) ::shutdown(connection, SHUT_RDWR);
    thread_.join();
    ::close(listener_);
  }
  RawRegistry(const RawRegistry&) = delete;
  RawRegistry& operator=(const RawRegistry&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + kBase; }
  // Bytes the client accepted (written into its socket) before it went away.
  std::size_t sent() const { return sent_; }

 private:
  void serve() {
    const int connection = ::accept(listener_, nullptr, nullptr);
    if (connection < 0) return;
    connection_ = connection;
    char request[4096];
    (void)::recv(connection, request, sizeof request, 0);
    while (!stop_) {
      const std::string bytes = next_();
      if (bytes.empty()) break;
      const ssize_t n = ::send(connection, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) break;
      sent_ += static_cast<std::size_t>(n);
    }
    ::close(connection);
  }

  std::function<std::string()> next_;
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::atomic<int> connection_{-1};
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> sent_{0};
};

std::unique_ptr<SchemaRegistry> raw_client(const RawRegistry& raw, std::chrono::milliseconds timeout,
                                           std::size_t max_bytes) {
  HttpSchemaRegistryOptions options;
  options.url = raw.url();
  options.timeout = timeout;
  options.max_response_bytes = max_bytes;
  return make_http_schema_registry(options);
}

// A registry that writes headers forever (many lines, one endless line, an endless chunk size)
// costs the client the answer-size bound, not what the registry chooses to send. The registry
// stops on its own after kFlood bytes so that a client without the bound fails instead of hanging.
constexpr std::size_t kFlood = std::size_t{256} << 20;
constexpr std::size_t kLimit = 64 * 1024;
// What the kernel's socket buffers on both ends may hold beyond what the client read.
constexpr std::size_t kSocketBuffers = std::size_t{32} << 20;

std::function<std::string()> flood(std::string head, std::string repeated) {
  auto total = std::make_shared<std::size_t>(0);
  return [head = std::move(head), repeated = std::move(repeated), total]() mutable {
    if (*total >= kFlood) return std::string();
    std::string out = *total == 0 ? head : std::string();
    while (out.size() < (1 << 16)) out += repeated;
    *total += out.size();
    return out;
  };
}

TEST(HttpSchemaRegistryRawTest, EndlessHeadersCostTheAnswerBoundNotTheRegistrysChoice) {
  const std::string line = "X-Pad: " + std::string(1000, 'a') + "\r\n";
  for (const auto& [what, head, repeated] : {
           std::tuple{"endless header lines", std::string("HTTP/1.1 200 OK\r\n"), line},
           std::tuple{"one endless header line", std::string("HTTP/1.1 200 OK\r\nX-Pad: "), std::string(4096, 'a')},
           std::tuple{"an endless chunk size", std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
                      std::string(4096, '0')},
       }) {
    SCOPED_TRACE(what);
    RawRegistry raw(flood(head, repeated));
    EXPECT_THROW(raw_client(raw, 10s, kLimit)->schema_by_id(1), SchemaRegistryUnavailable);
    EXPECT_LT(raw.sent(), kLimit + kSocketBuffers);
  }
}

TEST(HttpSchemaRegistryRawTest, HeadersDribbledForeverTimeOut) {
  // A header line every 20 ms, each well within the per-read timeout, for up to a minute.
  std::atomic<int> lines{0};
  RawRegistry raw([&] {
    const int n = lines++;
    if (n == 0) return std::string("HTTP/1.1 200 OK\r\n");
    if (n >= 3000) return std::string();
    std::this_thread::sleep_for(20ms);
    return std::string("X-Slow: 1\r\n");
  });
  try {
    raw_client(raw, 300ms, kLimit)->schema_by_id(1);
    ADD_FAILURE() << "did not throw";
  } catch (const SchemaRegistryUnavailable& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("schema id 1"), HasSubstr("no complete answer within 300 ms")));
  }
  // Gave up while the registry was still dribbling, not when it stopped.
  EXPECT_LT(lines.load(), 3000);
}

TEST(HttpSchemaRegistryRawTest, AnEnormousStatusLineIsUnavailableNotACrash) {
  // httplib 0.11 matched the status line with std::regex, which recursed once per character: a
  // registry answering a 50 KB status line took the daemon down with a stack overflow.
  for (const std::size_t length : {std::size_t{50000}, std::size_t{1} << 20}) {
    SCOPED_TRACE(length);
    auto sent = std::make_shared<bool>(false);
    RawRegistry raw([sent, length] {
      if (*sent) return std::string();
      *sent = true;
      return "HTTP/1.1 200 " + std::string(length, 'a') + "\r\nContent-Length: 2\r\n\r\n{}";
    });
    try {
      raw_client(raw, 10s, kLimit)->schema_by_id(1);
      ADD_FAILURE() << "did not throw";
    } catch (const SchemaRegistryUnavailable& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr(raw.url()), HasSubstr("schema id 1")));
    }
  }
}

TEST(HttpSchemaRegistryOptionsTest, DescribeAndErrorsNeverShowCredentials) {
  HttpSchemaRegistryOptions options;
  options.url = "https://registry.example.com:8081/apis/ccompat/v7/";
  options.basic_auth_user = "u";
  options.basic_auth_password = kPassword;
  EXPECT_EQ(make_http_schema_registry(options)->describe(), "https://registry.example.com:8081/apis/ccompat/v7");

  options.url = std::string("https://u:") + kPassword + "@registry.example.com";
  try {
    make_http_schema_registry(options);
    ADD_FAILURE() << "credentials in the url accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("basic_auth"), Not(HasSubstr(kPassword))));
  }
  // Without a scheme (or with another) too: "user:password@host" is what a user pastes.
  for (const std::string& url : {std::string("u:") + kPassword + "@registry.example.com",
                                 std::string("ftp://u:") + kPassword + "@registry.example.com",
                                 std::string("https://registry.example.com/?token=") + kPassword}) {
    try {
      options.url = url;
      make_http_schema_registry(options);
      ADD_FAILURE() << "accepted " << url;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), Not(HasSubstr(kPassword)));
    }
  }
  options.url = "ftp://registry";
  EXPECT_THROW(make_http_schema_registry(options), std::invalid_argument);
  options.url = "http://registry";
  options.tls_ca_file = "/etc/ssl/certs/ca-certificates.crt";
  EXPECT_THROW(make_http_schema_registry(options), std::invalid_argument);  // TLS files with http://
  options.url = "https://registry";
  options.tls_cert_file = "/nonexistent/client.pem";
  EXPECT_THROW(make_http_schema_registry(options), std::invalid_argument);  // no key
  options.tls_key_file = "/nonexistent/client.key";
  EXPECT_THROW(make_http_schema_registry(options), std::invalid_argument);  // does not load
}

}  // namespace
}  // namespace hbingest::connectors
