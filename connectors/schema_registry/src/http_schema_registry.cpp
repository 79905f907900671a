#include "hbingest/connectors/http_schema_registry.h"

#include <curl/curl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <strings.h>

#include <charconv>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace hbingest::connectors {
namespace {

// The error codes of the Confluent API that say "does not exist" (subject, version, schema).
constexpr int kSubjectNotFound = 40401;
constexpr int kVersionNotFound = 40402;
constexpr int kSchemaNotFound = 40403;
// How much of a registry's own error message goes into ours.
constexpr std::size_t kMaxQuotedMessage = 300;
// What the status line and headers of an answer may take together. Registries send a few hundred
// bytes. libcurl refuses a single line over its own limit (100 KB) by itself; this bounds the
// sum of many lines, which libcurl bounds far higher or, before 8.3, not at all.
constexpr std::size_t kMaxHeadBytes = 24 * 1024;

// libcurl's global state (its TLS library's, above all) is set up once, before the first handle,
// and never torn down: other threads may still be fetching while the process exits.
void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      throw std::runtime_error("schema registry client: libcurl failed to initialise");
    }
  });
}

struct CurlEasyDeleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
using CurlEasy = std::unique_ptr<CURL, CurlEasyDeleter>;

struct CurlSlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using CurlSlist = std::unique_ptr<curl_slist, CurlSlistDeleter>;

struct SslCtxDeleter {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};

// A client certificate and key that do not load (missing, unreadable, not PEM, not a pair) are a
// configuration error at start-up, not an "unavailable registry" at every fetch: libcurl would
// only find out while connecting, so they are loaded once here with the same TLS library.
bool client_certificate_loads(const std::string& cert_file, const std::string& key_file) {
  const std::unique_ptr<SSL_CTX, SslCtxDeleter> ctx(SSL_CTX_new(TLS_client_method()));
  const bool loads = ctx && SSL_CTX_use_certificate_chain_file(ctx.get(), cert_file.c_str()) == 1 &&
                     SSL_CTX_use_PrivateKey_file(ctx.get(), key_file.c_str(), SSL_FILETYPE_PEM) == 1 &&
                     SSL_CTX_check_private_key(ctx.get()) == 1;
  ERR_clear_error();  // the thread's OpenSSL error queue is not ours to leave filled
  return loads;
}

// What one exchange collects while libcurl runs it: the body, and why we stopped it, if we did.
struct Exchange {
  std::size_t max_response_bytes = 0;
  std::size_t head_bytes = 0;
  std::string body;
  std::optional<std::string> canceled;
};

// Every header line, the status line first. Returning anything but `size` makes libcurl abort
// the transfer (CURLE_WRITE_ERROR), with `canceled` saying why.
std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& exchange = *static_cast<Exchange*>(user);
  const std::size_t length = size * count;
  exchange.head_bytes += length;
  if (exchange.head_bytes > kMaxHeadBytes) {
    exchange.canceled = "status line and headers over the limit of " + std::to_string(kMaxHeadBytes) + " bytes";
    return 0;
  }
  // A declared length over the bound is refused before a byte of the body is read.
  // (CURLOPT_MAXFILESIZE_LARGE does the same, but does not say which length was declared.)
  std::string_view line(data, length);
  constexpr std::string_view kContentLength = "content-length:";
  if (line.size() > kContentLength.size() &&
      strncasecmp(line.data(), kContentLength.data(), kContentLength.size()) == 0) {
    line.remove_prefix(kContentLength.size());
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    unsigned long long declared = 0;
    const auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), declared);
    if (error == std::errc::result_out_of_range) {
      exchange.canceled = "answer declaring a length beyond any number is over the limit of " +
                          std::to_string(exchange.max_response_bytes) + " bytes";
      return 0;
    }
    if (error == std::errc{} && declared > exchange.max_response_bytes) {
      exchange.canceled = "answer of " + std::to_string(declared) + " bytes is over the limit of " +
                          std::to_string(exchange.max_response_bytes);
      return 0;
    }
  }
  return length;
}

// The body as it arrives: a chunked answer declares no length, so the bound is kept here.
std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& exchange = *static_cast<Exchange*>(user);
  const std::size_t length = size * count;
  if (exchange.body.size() + length > exchange.max_response_bytes) {
    exchange.canceled = "answer over the limit of " + std::to_string(exchange.max_response_bytes) + " bytes";
    return 0;
  }
  exchange.body.append(data, length);
  return length;
}

struct ParsedUrl {
  std::string scheme_host_port;  // "https://registry.example.com:8081"
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
    if (!options_.tls_cert_file.empty() && !client_certificate_loads(options_.tls_cert_file, options_.tls_key_file)) {
      throw std::invalid_argument("schema registry TLS: could not load the client certificate '" +
                                  options_.tls_cert_file + "' with its key '" + options_.tls_key_file + "'");
    }
    init_curl_once();
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
  // "schema registry http://host:8081/apis/ccompat/v7, GET /apis/ccompat/v7/schemas/ids/7 (schema id 7)"
  std::string context(const std::string& path, const std::string& what) const {
    return "schema registry " + describe() + ", GET " + path + " (" + what + ")";
  }

  // Whatever the registry said, with the password taken out should it ever echo it.
  std::string scrubbed(std::string text) const {
    return replace_all(std::move(text), options_.basic_auth_password, "***");
  }

  nlohmann::json get_json(const std::string& path, const std::string& what) {
    const auto where = [&] { return context(path, what); };
    Exchange exchange;
    exchange.max_response_bytes = options_.max_response_bytes;
    // Declared before the handle, which points at them until it is cleaned up.
    char error_buffer[CURL_ERROR_SIZE] = {};
    const std::string url = url_.scheme_host_port + path;
    const CurlSlist headers(curl_slist_append(
        nullptr,
        "Accept: application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json"));
    if (!headers) throw SchemaRegistryUnavailable(where() + ": out of memory for the request headers");
    // A handle per call: concurrent calls share nothing, and no connection outlives its call.
    const CurlEasy curl(curl_easy_init());
    if (!curl) throw SchemaRegistryUnavailable(where() + ": could not create a libcurl handle");
    const long timeout_ms = static_cast<long>(options_.timeout.count());

    CURLcode set = CURLE_OK;
    const auto option = [&](CURLoption what_option, auto value) {
      if (set == CURLE_OK) set = curl_easy_setopt(curl.get(), what_option, value);
    };
    option(CURLOPT_ERRORBUFFER, error_buffer);
    option(CURLOPT_URL, url.c_str());
    // The path as built: a subject named "." or ".." is a segment of its own, not a step up
    // that libcurl would otherwise take out of the path.
    option(CURLOPT_PATH_AS_IS, 1L);
    option(CURLOPT_PROTOCOLS_STR, "http,https");
    option(CURLOPT_HTTPGET, 1L);
    // One request per connection: HTTP/2 would buy nothing and add a parser to attack.
    option(CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    // Straight to the registry: not through a proxy named in the environment (http_proxy...),
    // which would see the credentials of an http:// registry and which no option of ours names.
    option(CURLOPT_PROXY, "");
    option(CURLOPT_HTTPHEADER, headers.get());
    // No signals: the timeouts must not use SIGALRM, which is process-wide and we are threaded.
    option(CURLOPT_NOSIGNAL, 1L);
    // The whole exchange (connect, TLS, status line, headers, body) within the timeout: a registry
    // dribbling its headers or body a byte at a time is bounded here.
    option(CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    option(CURLOPT_TIMEOUT_MS, timeout_ms);
    // A redirect is an answer of its own (unavailable), never followed: it would carry the
    // credentials elsewhere.
    option(CURLOPT_FOLLOWLOCATION, 0L);
    option(CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options_.max_response_bytes));
    option(CURLOPT_HEADERFUNCTION, &on_header);
    option(CURLOPT_HEADERDATA, &exchange);
    option(CURLOPT_WRITEFUNCTION, &on_body);
    option(CURLOPT_WRITEDATA, &exchange);
    if (!options_.basic_auth_user.empty()) {
      option(CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
      option(CURLOPT_USERNAME, options_.basic_auth_user.c_str());
      option(CURLOPT_PASSWORD, options_.basic_auth_password.c_str());
    }
    if (url_.https) {
      option(CURLOPT_SSL_VERIFYPEER, 1L);
      option(CURLOPT_SSL_VERIFYHOST, 2L);
      if (!options_.tls_ca_file.empty()) option(CURLOPT_CAINFO, options_.tls_ca_file.c_str());
      if (!options_.tls_cert_file.empty()) {
        option(CURLOPT_SSLCERT, options_.tls_cert_file.c_str());
        option(CURLOPT_SSLKEY, options_.tls_key_file.c_str());
      }
    }
    if (set != CURLE_OK) {
      throw SchemaRegistryUnavailable(where() + ": libcurl refused an option (" + curl_easy_strerror(set) + ")");
    }

    const CURLcode result = curl_easy_perform(curl.get());
    if (result != CURLE_OK) {
      throw SchemaRegistryUnavailable(where() + ": " + transport_error(result, exchange.canceled, error_buffer));
    }
    long response_code = 0;
    curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &response_code);
    const int status = static_cast<int>(response_code);
    const std::string& body = exchange.body;
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

  std::string transport_error(CURLcode error, const std::optional<std::string>& canceled,
                              const char* error_buffer) const {
    // We stopped it ourselves: our reason, not libcurl's "failed writing received data".
    if (canceled) return *canceled;
    const std::string ms = std::to_string(options_.timeout.count()) + " ms";
    // libcurl's own words, for what ours do not say (which host, which TLS failure); they never
    // hold the password, which is not in the URL. Quoted: part of them can be the registry's.
    const std::string detail = scrubbed(std::string(*error_buffer != '\0' ? error_buffer : curl_easy_strerror(error)));
    const std::string said = " (" + quote_registry_text(detail) + ")";
    switch (error) {
      case CURLE_COULDNT_RESOLVE_HOST:
      case CURLE_COULDNT_CONNECT:
        return "could not connect (refused, unreachable or no such host)" + said;
      case CURLE_OPERATION_TIMEDOUT:
        return "no complete answer within " + ms + said;
      case CURLE_FILESIZE_EXCEEDED:
        return "answer over the limit of " + std::to_string(options_.max_response_bytes) + " bytes" + said;
      case CURLE_SEND_ERROR:
        return "could not send the request" + said;
      case CURLE_SSL_CONNECT_ERROR:
        return "TLS handshake failed" + said;
      case CURLE_SSL_CACERT_BADFILE:
        return "could not load the TLS CA file '" + options_.tls_ca_file + "'" + said;
      case CURLE_SSL_CERTPROBLEM:
        return "could not use the TLS client certificate '" + options_.tls_cert_file + "'" + said;
      case CURLE_PEER_FAILED_VERIFICATION:
        return "the registry's TLS certificate was not accepted (not signed by the CA, or not for this host)" + said;
      case CURLE_RECV_ERROR:
      case CURLE_GOT_NOTHING:
      case CURLE_PARTIAL_FILE:
        return "no complete answer (read failed or the connection closed early)" + said;
      case CURLE_OUT_OF_MEMORY:
        // What libcurl says of a status or header line over its own limit, before we see it.
        return "status line or a header line over libcurl's limit (or out of memory)";
      case CURLE_WEIRD_SERVER_REPLY:
      case CURLE_UNSUPPORTED_PROTOCOL:
        return "the answer is not HTTP" + said;
      default:
        return "request failed" + said;
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
