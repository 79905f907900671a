#include "hbingest/connectors/http_schema_registry.h"

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

#include "socket_probe.h"

namespace hbingest::connectors {
namespace {

using Clock = std::chrono::steady_clock;

// The error codes of the Confluent API that say "does not exist" (subject, version, schema).
constexpr int kSubjectNotFound = 40401;
constexpr int kVersionNotFound = 40402;
constexpr int kSchemaNotFound = 40403;
// How much of a registry's own error message goes into ours.
constexpr std::size_t kMaxQuotedMessage = 300;

// What the status line and headers of an answer may take (read from the socket before the body;
// for https: with the TLS handshake). Registries send a few hundred bytes. Kept small because
// httplib matches the status line with std::regex, whose recursion grows with the line's length.
constexpr std::size_t kMaxHeadBytes = 24 * 1024;
constexpr std::size_t kMaxTlsHandshakeBytes = 64 * 1024;
// How often the watchdog looks at the socket.
constexpr auto kWatchInterval = std::chrono::microseconds(500);

// httplib 0.11 reads the status line, each header line and each chunk-size line without bound,
// in memory and in time (every byte only has to come within the per-read timeout), and calls us
// only once the headers are in: a registry writing headers forever would cost all memory and
// never return. The watchdog bounds the exchange from outside: past the deadline, or once more
// has been read from the socket than the head plus the answer bound, it stops the client, which
// shuts the socket down under the reading thread.
class Watchdog {
 public:
  Watchdog(httplib::Client& client, const std::atomic<int>& socket, Clock::time_point deadline,
           std::chrono::milliseconds timeout, std::size_t max_head_bytes, std::size_t max_response_bytes)
      : client_(client),
        socket_(socket),
        deadline_(deadline),
        timeout_(timeout),
        max_head_bytes_(max_head_bytes),
        max_response_bytes_(max_response_bytes),
        thread_([this] { watch(); }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // The headers are in: from now on the answer's bound applies (and the body's own check).
  void head_read() { head_read_ = true; }
  // Why it stopped the client, if it did.
  std::optional<std::string> reason() {
    std::lock_guard lock(mutex_);
    return reason_;
  }

 private:
  void watch() {
    std::unique_lock lock(mutex_);
    while (!done_cv_.wait_for(lock, kWatchInterval, [this] { return done_; })) {
      if (!reason_) reason_ = check();
      // Until the request is done: a stop() while still connecting has no socket to shut.
      if (reason_) client_.stop();
    }
  }

  std::optional<std::string> check() const {
    if (Clock::now() > deadline_) return "no complete answer within " + std::to_string(timeout_.count()) + " ms";
    const int socket = socket_.load();
    if (socket < 0) return std::nullopt;
    const auto read = detail::bytes_read_from(socket);
    if (!read) return std::nullopt;
    if (!head_read_ && *read > max_head_bytes_) {
      return "status line and headers still arriving after " + std::to_string(*read) + " bytes";
    }
    if (*read > max_head_bytes_ + max_response_bytes_) {
      return "answer over the limit of " + std::to_string(max_response_bytes_) + " bytes";
    }
    return std::nullopt;
  }

  httplib::Client& client_;
  const std::atomic<int>& socket_;
  const Clock::time_point deadline_;
  const std::chrono::milliseconds timeout_;
  const std::size_t max_head_bytes_;
  const std::size_t max_response_bytes_;
  std::atomic<bool> head_read_{false};
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::optional<std::string> reason_;
  std::thread thread_;  // last: starts once the rest is set
};

struct ParsedUrl {
  std::string scheme_host_port;  // "https://registry.example.com:8081", what httplib::Client takes
  std::string base_path;         // "/apis/ccompat/v7", no trailing slash; "" for the root
  bool https = false;
};

ParsedUrl parse_url(const std::string& url) {
  ParsedUrl out;
  std::string_view rest = url;
  // First, and not echoed: whatever the scheme, the part before '@' would be a password
  // ("user:password@host" pasted without one is the usual slip).
  const std::size_t authority_end =
      rest.find_first_of("/?#", rest.find("://") == std::string_view::npos ? 0 : rest.find("://") + 3);
  if (rest.substr(0, authority_end).find('@') != std::string_view::npos) {
    throw std::invalid_argument(
        "schema registry url must not carry credentials (user:password@host): give them as basic_auth");
  }
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
    out.https = true;
  } else {
    throw std::invalid_argument("schema registry url '" + url + "' must start with http:// or https://");
  }
  const std::size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  const std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  // Not echoed: the part before '@' would be a password.
  if (authority.find('@') != std::string_view::npos) {
    throw std::invalid_argument(
        "schema registry url must not carry credentials (user:password@host): give them as basic_auth");
  }
  if (authority.empty()) throw std::invalid_argument("schema registry url '" + url + "' has no host");
  if (path.find_first_of("?#") != std::string_view::npos) {
    // Not quoted: a query is where a token would be.
    throw std::invalid_argument("schema registry url must not have a query or fragment: give the API's base");
  }
  out.scheme_host_port = std::string(out.https ? "https://" : "http://") + std::string(authority);
  out.base_path = std::string(path);
  while (!out.base_path.empty() && out.base_path.back() == '/') out.base_path.pop_back();
  return out;
}

// A URL path segment: every byte but RFC 3986's unreserved characters percent-encoded, so a
// subject with '/', '?', '%' or spaces names itself and nothing else.
std::string encode_segment(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                            c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

// Text from the registry, made fit for a log line: bounded, printable.
std::string quote_registry_text(std::string_view text) {
  std::string out;
  for (const char ch : text.substr(0, kMaxQuotedMessage)) {
    const auto c = static_cast<unsigned char>(ch);
    out += (c < 0x20 || c == 0x7f) ? ' ' : ch;
  }
  if (text.size() > kMaxQuotedMessage) out += "...";
  return out;
}

std::string replace_all(std::string text, std::string_view what, std::string_view with) {
  if (what.empty()) return text;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size())) {
    text.replace(at, what.size(), with);
  }
  return text;
}

SchemaType parse_schema_type(const nlohmann::json& answer, const std::function<std::string()>& where) {
  const auto it = answer.find("schemaType");
  if (it == answer.end() || it->is_null()) return SchemaType::avro;  // the API's default
  if (!it->is_string()) {
    throw SchemaRegistryUnavailable(where() + ": answer's schemaType is not a string");
  }
  const auto& name = it->get_ref<const std::string&>();
  if (name == "AVRO") return SchemaType::avro;
  if (name == "PROTOBUF") return SchemaType::protobuf;
  if (name == "JSON") return SchemaType::json;
  // A definite answer: the schema exists but is of a kind (Apicurio also stores XML, OpenAPI...)
  // no event format reads, so an event naming it can never be decoded.
  throw SchemaNotFound(where() + ": schema is of type '" + quote_registry_text(name) + "', not AVRO, PROTOBUF or JSON");
}

class HttpSchemaRegistry final : public SchemaRegistry {
 public:
  explicit HttpSchemaRegistry(HttpSchemaRegistryOptions options)
      : options_(std::move(options)), url_(parse_url(options_.url)) {
    const bool any_tls =
        !options_.tls_ca_file.empty() || !options_.tls_cert_file.empty() || !options_.tls_key_file.empty();
    if (any_tls && !url_.https) {
      throw std::invalid_argument("schema registry url '" + options_.url +
                                  "' is http://, but TLS files are set: use https:// or drop them");
    }
    if (options_.tls_cert_file.empty() != options_.tls_key_file.empty()) {
      throw std::invalid_argument("schema registry TLS: a client certificate needs its key and a key its certificate");
    }
    if (options_.timeout <= std::chrono::milliseconds::zero()) {
      throw std::invalid_argument("schema registry timeout must be positive");
    }
    if (options_.max_response_bytes == 0) {
      throw std::invalid_argument("schema registry max_response_bytes must be positive");
    }
    // httplib loads a client certificate in the constructor and only says "invalid" if it fails.
    if (!make_client()->is_valid()) {
      throw std::invalid_argument("schema registry TLS: could not load the client certificate '" +
                                  options_.tls_cert_file + "' with its key '" + options_.tls_key_file + "'");
    }
  }

  RegisteredSchema schema_by_id(std::int32_t id) override {
    const std::string path = url_.base_path + "/schemas/ids/" + std::to_string(id);
    const std::string what = "schema id " + std::to_string(id);
    const nlohmann::json answer = get_json(path, what);
    RegisteredSchema out = to_schema(answer, [&] { return context(path, what); });
    out.id = id;
    return out;
  }

  RegisteredSchema schema_by_subject_version(std::string_view subject, std::int32_t version) override {
    const std::string path =
        url_.base_path + "/subjects/" + encode_segment(subject) + "/versions/" + std::to_string(version);
    const std::string what = "subject '" + quote_registry_text(subject) + "' version " + std::to_string(version);
    const nlohmann::json answer = get_json(path, what);
    const auto where = [&] { return context(path, what); };
    RegisteredSchema out = to_schema(answer, where);
    const auto id = answer.find("id");
    if (id != answer.end()) {
      if (!id->is_number_integer()) throw SchemaRegistryUnavailable(where() + ": answer's id is not a number");
      out.id = id->get<std::int32_t>();
    }
    return out;
  }

  std::string describe() const override { return url_.scheme_host_port + url_.base_path; }

 private:
  std::unique_ptr<httplib::Client> make_client() const {
    auto client =
        options_.tls_cert_file.empty()
            ? std::make_unique<httplib::Client>(url_.scheme_host_port)
            : std::make_unique<httplib::Client>(url_.scheme_host_port, options_.tls_cert_file, options_.tls_key_file);
    client->set_connection_timeout(options_.timeout);
    client->set_read_timeout(options_.timeout);
    client->set_write_timeout(options_.timeout);
    client->set_follow_location(false);
    client->set_keep_alive(false);
    if (!options_.basic_auth_user.empty()) {
      client->set_basic_auth(options_.basic_auth_user, options_.basic_auth_password);
    }
    if (url_.https) {
      if (!options_.tls_ca_file.empty()) client->set_ca_cert_path(options_.tls_ca_file);
      client->enable_server_certificate_verification(true);
    }
    return client;
  }

  // "schema registry http://host:8081/apis/ccompat/v7, GET /apis/ccompat/v7/schemas/ids/7 (schema id 7)"
  std::string context(const std::string& path, const std::string& what) const {
    return "schema registry " + describe() + ", GET " + path + " (" + what + ")";
  }

  // Whatever the registry said, with the password taken out should it ever echo it.
  std::string scrubbed(std::string text) const {
    return replace_all(std::move(text), options_.basic_auth_password, "***");
  }

  nlohmann::json get_json(const std::string& path, const std::string& what) {
    const auto deadline = Clock::now() + options_.timeout;
    std::string body;
    std::optional<std::string> canceled;  // why we stopped reading, when we did
    const auto client = make_client();
    std::atomic<int> socket{-1};
    client->set_socket_options([&socket](socket_t s) { socket = s; });
    Watchdog watchdog(*client, socket, deadline, options_.timeout,
                      kMaxHeadBytes + (url_.https ? kMaxTlsHandshakeBytes : 0), options_.max_response_bytes);
    const httplib::Headers headers{
        {"Accept", "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json"}};
    const auto result = client->Get(
        path, headers,
        [&](const httplib::Response& response) {
          watchdog.head_read();
          if (response.has_header("Content-Length")) {
            const auto declared = std::strtoull(response.get_header_value("Content-Length").c_str(), nullptr, 10);
            if (declared > options_.max_response_bytes) {
              canceled = "answer of " + std::to_string(declared) + " bytes is over the limit of " +
                         std::to_string(options_.max_response_bytes);
              return false;
            }
          }
          return true;
        },
        [&](const char* data, std::size_t length) {
          if (body.size() + length > options_.max_response_bytes) {
            canceled = "answer over the limit of " + std::to_string(options_.max_response_bytes) + " bytes";
            return false;
          }
          // httplib bounds each read by the timeout; a registry dribbling bytes is bounded here.
          if (Clock::now() > deadline) {
            canceled = "no complete answer within " + std::to_string(options_.timeout.count()) + " ms";
            return false;
          }
          body.append(data, length);
          return true;
        });
    const auto where = [&] { return context(path, what); };
    if (!result) {
      // The watchdog's reason first: its stop() shows as a failed read.
      throw SchemaRegistryUnavailable(where() + ": " +
                                      watchdog.reason().value_or(transport_error(result.error(), canceled)));
    }

    const int status = result->status;
    std::optional<nlohmann::json> answer;
    if (auto parsed = nlohmann::json::parse(body, nullptr, false); !parsed.is_discarded()) answer = std::move(parsed);
    if (status == 200) {
      if (!answer || !answer->is_object()) {
        throw SchemaRegistryUnavailable(where() + ": answered 200 with " +
                                        (answer ? "JSON that is not an object" : "a body that is not JSON") +
                                        ": is the url the API's base?");
      }
      return std::move(*answer);
    }
    // The API's error body: {"error_code": 40403, "message": "..."}.
    std::optional<int> error_code;
    std::string message;
    if (answer && answer->is_object()) {
      if (const auto code = answer->find("error_code"); code != answer->end() && code->is_number_integer()) {
        error_code = code->get<int>();
      }
      if (const auto m = answer->find("message"); m != answer->end() && m->is_string()) {
        // Scrubbed before it is cut: a password straddling the cut would leave its first half.
        message = quote_registry_text(scrubbed(m->get_ref<const std::string&>()));
      }
    }
    std::string said = "answered " + std::to_string(status);
    if (error_code) said += ", error_code " + std::to_string(*error_code);
    if (!message.empty()) said += ": " + message;

    if (status == 404 && error_code &&
        (*error_code == kSubjectNotFound || *error_code == kVersionNotFound || *error_code == kSchemaNotFound)) {
      throw SchemaNotFound(where() + ": not found (" + said + ")");
    }
    if (status == 404) {
      throw SchemaRegistryUnavailable(where() + ": " + said +
                                      " without the API's not-found error code: is the url the API's base "
                                      "(Apicurio: .../apis/ccompat/v7)?");
    }
    if (status == 401 || status == 403) {
      throw SchemaRegistryUnavailable(where() + ": credentials refused (" + said + ")");
    }
    throw SchemaRegistryUnavailable(where() + ": " + said);
  }

  std::string transport_error(httplib::Error error, const std::optional<std::string>& canceled) const {
    const std::string ms = std::to_string(options_.timeout.count()) + " ms";
    switch (error) {
      case httplib::Error::Canceled:
        return canceled.value_or("request canceled");
      case httplib::Error::Connection:
        return "could not connect (refused, unreachable or no such host)";
      case httplib::Error::ConnectionTimeout:
        return "could not connect within " + ms;
      case httplib::Error::Read:
        return "no complete answer (read failed or nothing within " + ms + ")";
      case httplib::Error::Write:
        return "could not send the request";
      case httplib::Error::SSLConnection:
        return "TLS handshake failed";
      case httplib::Error::SSLLoadingCerts:
        return "could not load the TLS CA file '" + options_.tls_ca_file + "'";
      case httplib::Error::SSLServerVerification:
        return "the registry's TLS certificate was not accepted (not signed by the CA, or not for this host)";
      default:
        return "request failed (" + httplib::to_string(error) + ")";
    }
  }

  static RegisteredSchema to_schema(const nlohmann::json& answer, const std::function<std::string()>& where) {
    RegisteredSchema out;
    const auto schema = answer.find("schema");
    if (schema == answer.end() || !schema->is_string()) {
      throw SchemaRegistryUnavailable(where() + ": answer has no schema string");
    }
    out.type = parse_schema_type(answer, where);
    out.text = schema->get<std::string>();
    if (const auto refs = answer.find("references"); refs != answer.end() && !refs->is_null()) {
      if (!refs->is_array()) throw SchemaRegistryUnavailable(where() + ": answer's references is not a list");
      for (const auto& ref : *refs) {
        const auto name = ref.find("name");
        const auto subject = ref.find("subject");
        const auto version = ref.find("version");
        if (!ref.is_object() || name == ref.end() || !name->is_string() || subject == ref.end() ||
            !subject->is_string() || version == ref.end() || !version->is_number_integer()) {
          throw SchemaRegistryUnavailable(where() + ": a reference is not {name, subject, version}");
        }
        out.references.push_back({name->get<std::string>(), subject->get<std::string>(), version->get<std::int32_t>()});
      }
    }
    return out;
  }

  const HttpSchemaRegistryOptions options_;
  const ParsedUrl url_;
};

}  // namespace

std::unique_ptr<SchemaRegistry> make_http_schema_registry(const HttpSchemaRegistryOptions& options) {
  return std::make_unique<HttpSchemaRegistry>(options);
}

}  // namespace hbingest::connectors
