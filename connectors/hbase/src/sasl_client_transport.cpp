#include "sasl_client_transport.h"

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5/krb5.h>
#include <sasl/sasl.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <mutex>
#include <optional>
#include <utility>

#include "hbingest/connectors/hbase_types.h"
#include "sasl_frame.h"

namespace hbingest::connectors {

namespace {

using apache::thrift::transport::TTransportException;

// The largest security-layer token cyrus-sasl decodes: the GSSAPI mechanism's buffer sizes are
// three bytes on the wire (RFC 4752). We advertise it as our receive size, and a wrapped reply
// frame above it cannot be unwrapped, so it is refused before it is read.
constexpr unsigned kMaxWrappedBytes = 0xFFFFFF;
// How much of an answer that is not SASL an error message quotes.
constexpr std::size_t kAnswerStartBytes = 16;

std::string_view qop_name(SaslQop qop) {
  switch (qop) {
    case SaslQop::authentication:
      return "authentication (auth)";
    case SaslQop::integrity:
      return "integrity (auth-int)";
    case SaslQop::privacy:
      return "privacy (auth-conf)";
  }
  return "?";
}

SaslQop qop_of_ssf(sasl_ssf_t ssf) {
  if (ssf == 0) return SaslQop::authentication;
  if (ssf == 1) return SaslQop::integrity;
  return SaslQop::privacy;
}

// cyrus-sasl's log lines, into ours. SASL_LOG_FAIL lines are the texts it also keeps as the
// connection's error detail, which our exceptions carry: debug only, or every failed handshake
// would be logged twice. SASL_LOG_PASS (traces that may hold secrets) never goes out.
int log_to_spdlog(void* context, int level, const char* message) noexcept {
  try {
    const auto* endpoint = static_cast<const std::string*>(context);
    const std::string text =
        "cyrus-sasl" + (endpoint ? " (" + *endpoint + ")" : std::string()) + ": " + (message ? message : "");
    switch (level) {
      case SASL_LOG_ERR:
      case SASL_LOG_WARN:
        spdlog::warn("{}", text);
        break;
      case SASL_LOG_FAIL:
        spdlog::debug("{}", text);
        break;
      case SASL_LOG_NOTE:
        spdlog::info("{}", text);
        break;
      case SASL_LOG_DEBUG:
        spdlog::debug("{}", text);
        break;
      case SASL_LOG_TRACE:
        spdlog::trace("{}", text);
        break;
      default:
        break;
    }
  } catch (...) {
    // Logging must never throw into cyrus-sasl.
  }
  return SASL_OK;
}

// The authorization id: none, so the gateway authorizes the authenticated principal itself (HBase's
// callback requires the two to be equal).
int empty_user(void*, int, const char** result, unsigned* len) noexcept {
  *result = "";
  if (len) *len = 0;
  return SASL_OK;
}

template <class Fn>
int (*as_callback(Fn* fn))(void) {
  // cyrus-sasl's callback table takes untyped functions; void (*)() is the type that converts to
  // and from any other without a warning.
  return reinterpret_cast<int (*)(void)>(reinterpret_cast<void (*)()>(fn));
}

// GSSAPI major and minor status as text, as gss_display_status gives them.
std::string gss_error(OM_uint32 major, OM_uint32 minor) {
  std::string out;
  const auto append = [&](OM_uint32 code, int type) {
    OM_uint32 context = 0;
    do {
      OM_uint32 ignored = 0;
      gss_buffer_desc text = GSS_C_EMPTY_BUFFER;
      if (GSS_ERROR(gss_display_status(&ignored, code, type, GSS_C_NO_OID, &context, &text))) break;
      if (!out.empty()) out += ": ";
      out.append(static_cast<const char*>(text.value), text.length);
      gss_release_buffer(&ignored, &text);
    } while (context != 0);
  };
  append(major, GSS_C_GSS_CODE);
  if (minor != 0) append(minor, GSS_C_MECH_CODE);
  return out;
}

struct GssCredDeleter {
  void operator()(gss_cred_id_t cred) const noexcept {
    OM_uint32 minor = 0;
    gss_release_cred(&minor, &cred);
  }
};
using GssCred = std::unique_ptr<std::remove_pointer_t<gss_cred_id_t>, GssCredDeleter>;

struct GssNameDeleter {
  void operator()(gss_name_t name) const noexcept {
    OM_uint32 minor = 0;
    gss_release_name(&minor, &name);
  }
};
using GssName = std::unique_ptr<std::remove_pointer_t<gss_name_t>, GssNameDeleter>;

struct SaslConnDeleter {
  void operator()(sasl_conn_t* conn) const noexcept { sasl_dispose(&conn); }
};
using SaslConn = std::unique_ptr<sasl_conn_t, SaslConnDeleter>;

struct Krb5ContextDeleter {
  void operator()(krb5_context context) const noexcept { krb5_free_context(context); }
};
using Krb5Context = std::unique_ptr<std::remove_pointer_t<krb5_context>, Krb5ContextDeleter>;

// The client's credentials from `ccache` (the process's default cache when empty), for
// `principal` when set: a cache that holds another principal, no TGT or an expired one fails here,
// before any byte goes to the gateway.
GssCred acquire_credentials(const Thrift2SaslOptions& options) {
  OM_uint32 minor = 0;
  GssName desired;
  if (!options.principal.empty()) {
    gss_buffer_desc name{options.principal.size(), const_cast<char*>(options.principal.data())};
    gss_name_t imported = GSS_C_NO_NAME;
    const OM_uint32 major = gss_import_name(&minor, &name, GSS_KRB5_NT_PRINCIPAL_NAME, &imported);
    if (GSS_ERROR(major)) {
      throw SaslHandshakeError("principal '" + options.principal +
                               "' is not a Kerberos principal: " + gss_error(major, minor));
    }
    desired.reset(imported);
  }
  gss_OID_desc krb5_mech = *gss_mech_krb5;
  gss_OID_set_desc mechs{1, &krb5_mech};
  gss_key_value_element_desc element{"ccache", options.ccache.c_str()};
  gss_key_value_set_desc store{1, &element};
  gss_cred_id_t cred = GSS_C_NO_CREDENTIAL;
  OM_uint32 lifetime = 0;
  const OM_uint32 major =
      gss_acquire_cred_from(&minor, desired.get(), GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE,
                            options.ccache.empty() ? GSS_C_NO_CRED_STORE : &store, &cred, nullptr, &lifetime);
  if (GSS_ERROR(major)) {
    throw SaslHandshakeError("no usable Kerberos credentials in " +
                             (options.ccache.empty() ? std::string("the default credential cache")
                                                     : "credential cache '" + options.ccache + "'") +
                             " (" + gss_error(major, minor) + ")");
  }
  return GssCred(cred);
}

// The name MIT Kerberos will ask the KDC a ticket for when cyrus-sasl imports "service@host" as a
// host-based service: krb5_sname_to_principal with the process's krb5.conf. It must keep the host
// as written: with dns_canonicalize_hostname or rdns on, krb5 replaces it with whatever DNS says
// (127.0.0.1 becomes localhost), and the gateway the ticket is for is then DNS's choice.
// cyrus-sasl does not expose the GSSAPI context, so the ticket's name cannot be read afterwards;
// the same function with the same profile computes it, so checking it first checks the ticket.
void check_principal_host(const std::string& service, const std::string& host) {
  krb5_context raw = nullptr;
  if (krb5_init_context(&raw) != 0) {
    throw SaslHandshakeError("cannot read the Kerberos configuration (krb5_init_context failed)");
  }
  const Krb5Context context(raw);
  krb5_principal principal = nullptr;
  const krb5_error_code code =
      krb5_sname_to_principal(context.get(), host.c_str(), service.c_str(), KRB5_NT_SRV_HST, &principal);
  if (code != 0) {
    const char* message = krb5_get_error_message(context.get(), code);
    const std::string text = message ? message : "unknown error";
    krb5_free_error_message(context.get(), message);
    throw SaslHandshakeError("no Kerberos principal for " + service + "/" + host + " (" + text + ")");
  }
  std::string actual;
  if (krb5_princ_size(context.get(), principal) >= 2) {
    const krb5_data* component = krb5_princ_component(context.get(), principal, 1);
    actual.assign(component->data, component->length);
  }
  krb5_free_principal(context.get(), principal);
  const auto lower = [](std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
  };
  // krb5 lowercases host names itself; that is not DNS.
  if (lower(actual) != lower(host)) {
    throw SaslHandshakeError("Kerberos would ask for a ticket for " + service + "/" + actual + " instead of " +
                             service + "/" + host +
                             ": krb5.conf lets DNS rewrite the gateway's host; set dns_canonicalize_hostname = false "
                             "and rdns = false in [libdefaults], or name the principal's host in "
                             "hbase.sasl.server_principal_host");
  }
}

}  // namespace

void init_sasl_client() {
  static std::once_flag once;
  static int result = SASL_OK;
  std::call_once(once, [] {
    // Process-wide callbacks: cyrus-sasl's lines that belong to no connection.
    static sasl_callback_t callbacks[] = {
        {SASL_CB_LOG, as_callback(&log_to_spdlog), nullptr},
        {SASL_CB_LIST_END, nullptr, nullptr},
    };
    result = sasl_client_init(callbacks);
  });
  if (result != SASL_OK) {
    throw std::runtime_error(std::string("cyrus-sasl could not start: ") + sasl_errstring(result, nullptr, nullptr));
  }
}

namespace {

// cyrus-sasl's GSSAPI client and its security layer. Member order: the connection, which holds the
// credentials' handle, is destroyed before them.
class CyrusGssapi final : public SaslMechanism {
 public:
  CyrusGssapi(const Thrift2SaslOptions& options, const std::string& host, const std::string& endpoint)
      : endpoint_(endpoint), credentials_(acquire_credentials(options)) {
    callbacks_[0] = {SASL_CB_LOG, as_callback(&log_to_spdlog), &endpoint_};
    callbacks_[1] = {SASL_CB_USER, as_callback(&empty_user), nullptr};
    callbacks_[2] = {SASL_CB_LIST_END, nullptr, nullptr};
    sasl_conn_t* raw = nullptr;
    const int rc = sasl_client_new(options.service.c_str(), host.c_str(), nullptr, nullptr, callbacks_, 0, &raw);
    conn_.reset(raw);
    if (rc != SASL_OK) throw_failure("sasl_client_new", rc);
    sasl_security_properties_t props{};
    // No minimum here: cyrus-sasl would refuse a weaker gateway with a bare "too weak". It picks
    // the strongest layer the gateway offers, and the transport compares that with hbase.sasl.qop
    // before a byte of data goes out, naming both.
    props.min_ssf = 0;
    props.max_ssf = std::numeric_limits<sasl_ssf_t>::max();
    props.maxbufsize = kMaxWrappedBytes;
    check(sasl_setprop(conn_.get(), SASL_SEC_PROPS, &props), "sasl_setprop(SASL_SEC_PROPS)");
    // cyrus-sasl keeps the handle only; credentials_ outlives conn_.
    check(sasl_setprop(conn_.get(), SASL_GSS_CREDS, credentials_.get()), "sasl_setprop(SASL_GSS_CREDS)");
  }

  std::string_view name() const override { return "GSSAPI"; }

  std::string start() override {
    const char* out = nullptr;
    unsigned out_len = 0;
    const char* mechanism = nullptr;
    sasl_interact_t* interact = nullptr;
    const int rc = sasl_client_start(conn_.get(), "GSSAPI", &interact, &out, &out_len, &mechanism);
    if (rc == SASL_NOMECH) {
      throw SaslHandshakeError("cyrus-sasl has no usable GSSAPI mechanism (" + detail() +
                               "): install libsasl2-modules-gssapi-mit");
    }
    if (rc != SASL_OK && rc != SASL_CONTINUE) throw_failure("GSSAPI could not start", rc);
    complete_ = rc == SASL_OK;
    return {out ? out : "", out_len};
  }

  std::string step(const std::string& challenge) override {
    const char* out = nullptr;
    unsigned out_len = 0;
    sasl_interact_t* interact = nullptr;
    const int rc = sasl_client_step(conn_.get(), challenge.data(), static_cast<unsigned>(challenge.size()), &interact,
                                    &out, &out_len);
    if (rc != SASL_OK && rc != SASL_CONTINUE) throw_failure("cyrus-sasl", rc);
    complete_ = rc == SASL_OK;
    return {out ? out : "", out_len};
  }

  bool complete() const override { return complete_; }

  unsigned ssf() const override {
    const void* value = nullptr;
    if (sasl_getprop(conn_.get(), SASL_SSF, &value) != SASL_OK || value == nullptr) return 0;
    return *static_cast<const sasl_ssf_t*>(value);
  }

  std::size_t max_output() const override {
    const void* value = nullptr;
    if (sasl_getprop(conn_.get(), SASL_MAXOUTBUF, &value) != SASL_OK || value == nullptr) return 0;
    return *static_cast<const unsigned*>(value);
  }

  std::size_t max_token_bytes() const override { return kMaxWrappedBytes; }

  std::string_view encode(const char* data, std::size_t size) override {
    const char* out = nullptr;
    unsigned out_len = 0;
    const int rc = sasl_encode(conn_.get(), data, static_cast<unsigned>(size), &out, &out_len);
    if (rc != SASL_OK) {
      throw TTransportException(TTransportException::UNKNOWN, "SASL wrap for " + endpoint_ + " failed: " + detail());
    }
    return {out, out_len};
  }

  std::string_view decode(const char* data, std::size_t size) override {
    const char* out = nullptr;
    unsigned out_len = 0;
    const int rc = sasl_decode(conn_.get(), data, static_cast<unsigned>(size), &out, &out_len);
    if (rc != SASL_OK) {
      throw TTransportException(TTransportException::CORRUPTED_DATA,
                                "SASL unwrap of a reply from " + endpoint_ +
                                    " failed (a frame that does not verify or decrypt): " + detail());
    }
    return {out, out_len};
  }

 private:
  std::string detail() const { return conn_ ? sasl_errdetail(conn_.get()) : ""; }
  void check(int rc, const char* call) {
    if (rc != SASL_OK) throw_failure(call, rc);
  }
  [[noreturn]] void throw_failure(const char* call, int rc) {
    throw SaslHandshakeError(std::string(call) + ": " +
                             (conn_ ? detail() : std::string(sasl_errstring(rc, nullptr, nullptr))));
  }

  std::string endpoint_;  // cyrus-sasl's log callback points here
  GssCred credentials_;
  sasl_callback_t callbacks_[3] = {};
  SaslConn conn_;
  bool complete_ = false;
};

}  // namespace

std::string describe_sasl_link(const Thrift2SaslOptions& options, const std::string& principal_host,
                               const std::string& endpoint) {
  return "Kerberos (SASL GSSAPI) to Thrift2 gateway " + endpoint + " as " +
         (options.principal.empty() ? std::string("the cache's principal") : "'" + options.principal + "'") + " for " +
         options.service + "/" + principal_host;
}

SaslMechanismFactory make_gssapi_mechanism(Thrift2SaslOptions options, std::string principal_host,
                                           std::string endpoint) {
  return [options = std::move(options), host = std::move(principal_host),
          endpoint = std::move(endpoint)]() -> std::unique_ptr<SaslMechanism> {
    try {
      init_sasl_client();
    } catch (const std::runtime_error& e) {
      throw SaslHandshakeError(e.what());
    }
    check_principal_host(options.service, host);
    return std::make_unique<CyrusGssapi>(options, host, endpoint);
  };
}

SaslClientTransport::SaslClientTransport(std::shared_ptr<apache::thrift::transport::TTransport> socket,
                                         SaslMechanismFactory mechanism, std::string link, SaslQop required,
                                         std::size_t max_frame_bytes,
                                         const std::shared_ptr<apache::thrift::TConfiguration>& config)
    : TVirtualTransport(config),
      socket_(std::move(socket)),
      make_mechanism_(std::move(mechanism)),
      link_(std::move(link)),
      required_(required),
      max_frame_bytes_(max_frame_bytes) {}

SaslClientTransport::~SaslClientTransport() = default;

bool SaslClientTransport::isOpen() const { return open_ && socket_->isOpen(); }

bool SaslClientTransport::peek() { return read_pos_ < plain_.size() || socket_->peek(); }

void SaslClientTransport::close() {
  open_ = false;
  mechanism_.reset();
  socket_->close();
}

const std::string SaslClientTransport::getOrigin() const { return socket_->getOrigin(); }

void SaslClientTransport::open() {
  if (open_) throw TTransportException(TTransportException::UNKNOWN, "SASL transport already open");
  if (!socket_->isOpen()) socket_->open();
  try {
    negotiate();
  } catch (const SaslHandshakeError& e) {
    mechanism_.reset();
    const std::string message = e.what();
    // Every handshake error names the link once.
    throw SaslHandshakeError(message.starts_with(link_) ? message : link_ + ": " + message);
  } catch (...) {
    mechanism_.reset();
    throw;
  }
  open_ = true;
}

void SaslClientTransport::negotiate() {
  mechanism_ = make_mechanism_();
  const std::string mechanism_name(mechanism_->name());
  // The first bytes of each answer, to say what answered when it was not SASL.
  std::string answer_start;
  const sasl::ByteSource source = [&](std::uint8_t* out, std::size_t size) -> std::size_t {
    const uint32_t got = socket_->read(out, static_cast<uint32_t>(std::min<std::size_t>(size, 1U << 30)));
    if (answer_start.size() < kAnswerStartBytes) {
      answer_start.append(reinterpret_cast<const char*>(out),
                          std::min<std::size_t>(got, kAnswerStartBytes - answer_start.size()));
    }
    return got;
  };
  const auto send = [&](sasl::NegotiationStatus status, std::string_view payload) {
    const std::string message = sasl::encode_negotiation_message(status, payload);
    socket_->write(reinterpret_cast<const uint8_t*>(message.data()), static_cast<uint32_t>(message.size()));
  };
  const std::string first_step = "the answer to SASL START";
  const auto receive = [&](const std::string& step) {
    answer_start.clear();
    sasl::NegotiationMessage message;
    try {
      message = sasl::read_negotiation_message(source, step);
    } catch (const sasl::SaslFrameError& e) {
      const std::string quoted = answer_start.empty() ? "" : " (it sent '" + sasl::printable(answer_start) + "')";
      const std::string hint = step == first_step
                                   ? "; the gateway does not speak SASL: is it kerberized "
                                     "(hbase.thrift.security.qop)? If not, set hbase.sasl.mechanism: none"
                                   : "";
      throw SaslHandshakeError(e.what() + quoted + hint);
    } catch (const TTransportException& e) {
      if (e.getType() == TTransportException::TIMED_OUT) {
        throw SaslHandshakeError("no answer within hbase.read_timeout while hbingest waited for " + step +
                                 (step == first_step ? ": a plain (not kerberized) Thrift gateway waits for more "
                                                       "bytes; check hbase.sasl and the gateway's "
                                                       "hbase.thrift.security.qop"
                                                     : std::string()) +
                                 " [" + e.what() + "]");
      }
      throw SaslHandshakeError("the connection failed while hbingest waited for " + step + ": " + e.what());
    }
    if (message.status == sasl::NegotiationStatus::bad || message.status == sasl::NegotiationStatus::error) {
      throw SaslHandshakeError("the gateway refused the handshake (" + std::string(sasl::status_name(message.status)) +
                               " while hbingest waited for " + step + "): '" + sasl::printable(message.payload) +
                               "' (see the Thrift2 server's log)");
    }
    if (message.status != sasl::NegotiationStatus::ok && message.status != sasl::NegotiationStatus::complete) {
      throw SaslHandshakeError("the gateway sent " + std::string(sasl::status_name(message.status)) +
                               " while hbingest waited for " + step + " (expected OK or COMPLETE)");
    }
    return message;
  };

  const std::string initial = mechanism_->start();
  send(sasl::NegotiationStatus::start, mechanism_name);
  send(mechanism_->complete() ? sasl::NegotiationStatus::complete : sasl::NegotiationStatus::ok, initial);
  socket_->flush();

  std::string step = first_step;
  std::optional<sasl::NegotiationStatus> last;
  int round = 0;
  while (!mechanism_->complete()) {
    const sasl::NegotiationMessage message = receive(step);
    last = message.status;
    std::string response;
    try {
      response = mechanism_->step(message.payload);
    } catch (const SaslHandshakeError& e) {
      const SaslHandshakeError error(mechanism_name + " step " + std::to_string(round + 1) + " failed: " + e.what());
      // Told to the gateway (BAD, as Java's client does) before the connection is dropped.
      try {
        send(sasl::NegotiationStatus::bad, error.what());
        socket_->flush();
      } catch (...) {
        // The connection is being dropped anyway.
      }
      throw error;
    }
    ++round;
    step = "the gateway's answer to " + mechanism_name + " step " + std::to_string(round);
    if (message.status == sasl::NegotiationStatus::complete) {
      if (!mechanism_->complete()) {
        throw SaslHandshakeError("the gateway said COMPLETE before the " + mechanism_name + " exchange was complete");
      }
      break;
    }
    send(mechanism_->complete() ? sasl::NegotiationStatus::complete : sasl::NegotiationStatus::ok, response);
    socket_->flush();
  }
  // The gateway answers our COMPLETE with its own.
  if (!last || *last == sasl::NegotiationStatus::ok) {
    const sasl::NegotiationMessage message = receive("the gateway's COMPLETE");
    if (message.status != sasl::NegotiationStatus::complete) {
      throw SaslHandshakeError("the gateway sent OK after the " + mechanism_name +
                               " exchange was complete (expected COMPLETE)");
    }
  }

  const unsigned ssf = mechanism_->ssf();
  negotiated_qop_ = qop_of_ssf(ssf);
  // The mechanism took the strongest layer the gateway offers: less than required is refused
  // here, before any data is sent.
  if (static_cast<int>(negotiated_qop_) < static_cast<int>(required_)) {
    throw SaslHandshakeError("the gateway offers at most " + std::string(qop_name(negotiated_qop_)) +
                             " (its hbase.thrift.security.qop) but hbase.sasl.qop requires " +
                             std::string(qop_name(required_)));
  }
  if (negotiated_qop_ != SaslQop::authentication && mechanism_->max_output() == 0) {
    throw SaslHandshakeError("the gateway negotiated a security layer without a buffer size");
  }
  spdlog::debug("{}: handshake complete, {} (SSF {})", link_, qop_name(negotiated_qop_), ssf);
}

uint32_t SaslClientTransport::read(uint8_t* buf, uint32_t len) {
  if (!open_) throw TTransportException(TTransportException::NOT_OPEN, "SASL transport not open");
  if (read_pos_ >= plain_.size()) read_frame();
  const auto n = static_cast<uint32_t>(std::min<std::size_t>(len, plain_.size() - read_pos_));
  std::copy_n(plain_.data() + read_pos_, n, buf);
  read_pos_ += n;
  countConsumedMessageBytes(n);
  return n;
}

void SaslClientTransport::read_frame() {
  const sasl::ByteSource source = [this](std::uint8_t* out, std::size_t size) -> std::size_t {
    return socket_->read(out, static_cast<uint32_t>(std::min<std::size_t>(size, 1U << 30)));
  };
  const bool wrapped = negotiated_qop_ != SaslQop::authentication;
  const std::size_t limit = wrapped ? std::min(max_frame_bytes_, mechanism_->max_token_bytes()) : max_frame_bytes_;
  read_pos_ = 0;
  plain_.clear();
  while (plain_.empty()) {
    try {
      sasl::read_data_frame(source, limit, frame_);
    } catch (const sasl::SaslFrameError& e) {
      std::string message = e.what();
      if (wrapped && limit < max_frame_bytes_ && message.find("above the") != std::string::npos) {
        message += " (the largest token the security layer unwraps: lower query.chunk_rows)";
      }
      throw TTransportException(TTransportException::CORRUPTED_DATA, message);
    }
    if (!wrapped) {
      plain_.swap(frame_);
      return;
    }
    // A frame is exactly one security-layer packet: the length cyrus-sasl expects in front of the
    // token is the frame's own, so it gets those 4 bytes first, then the token.
    std::uint8_t header[sasl::kFrameHeaderBytes];
    sasl::encode_frame_length(static_cast<std::uint32_t>(frame_.size()), header);
    if (!mechanism_->decode(reinterpret_cast<const char*>(header), sasl::kFrameHeaderBytes).empty()) {
      throw TTransportException(TTransportException::CORRUPTED_DATA, "SASL unwrap returned data before its token");
    }
    const std::string_view plain = mechanism_->decode(frame_.data(), frame_.size());
    plain_.assign(plain.data(), plain.size());
  }
}

uint32_t SaslClientTransport::readEnd() {
  resetConsumedMessageSize();
  return 0;
}

void SaslClientTransport::write(const uint8_t* buf, uint32_t len) {
  if (!open_) throw TTransportException(TTransportException::NOT_OPEN, "SASL transport not open");
  write_buffer_.append(reinterpret_cast<const char*>(buf), len);
}

void SaslClientTransport::flush() {
  if (!open_) throw TTransportException(TTransportException::NOT_OPEN, "SASL transport not open");
  std::string pending;
  pending.swap(write_buffer_);
  if (pending.empty()) return;
  if (negotiated_qop_ == SaslQop::authentication) {
    std::uint8_t header[sasl::kFrameHeaderBytes];
    sasl::encode_frame_length(static_cast<std::uint32_t>(pending.size()), header);
    socket_->write(header, sasl::kFrameHeaderBytes);
    socket_->write(reinterpret_cast<const uint8_t*>(pending.data()), static_cast<uint32_t>(pending.size()));
    socket_->flush();
    return;
  }
  // Java wraps a whole flush into one token; cyrus-sasl wraps at most the gateway's buffer size
  // (SASL_MAXOUTBUF) into one packet and puts the token's 4-byte length in front of it. That
  // packet is byte for byte a SASL data frame (length + token), and the gateway's TSaslTransport
  // unwraps frame after frame into one stream: each packet goes out as one frame, as it is.
  const std::size_t chunk = mechanism_->max_output();
  for (std::size_t offset = 0; offset < pending.size(); offset += chunk) {
    const std::size_t size = std::min(chunk, pending.size() - offset);
    const std::string_view packet = mechanism_->encode(pending.data() + offset, size);
    // One packet in, one packet out: its length must cover exactly the rest.
    if (packet.size() <= sasl::kFrameHeaderBytes || sasl::decode_frame_length(reinterpret_cast<const std::uint8_t*>(
                                                        packet.data())) != packet.size() - sasl::kFrameHeaderBytes) {
      throw TTransportException(TTransportException::UNKNOWN,
                                "SASL wrap made " + std::to_string(packet.size()) + " bytes that are not one packet");
    }
    socket_->write(reinterpret_cast<const uint8_t*>(packet.data()), static_cast<uint32_t>(packet.size()));
  }
  socket_->flush();
}

}  // namespace hbingest::connectors
