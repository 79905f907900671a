// The SASL client transport against a fake gateway on 127.0.0.1 (a thread speaking the wire
// format of Java's TSaslServerTransport) and a fake mechanism (no Kerberos): the handshake's
// messages, the frames after it, wrapped or not, and what a hostile or foreign gateway gets back.
// Kerberos itself is proven against the stack's KDC and gateway (tests/integration/hbase).
//
// The largest single allocation is recorded (tests/support/largest_allocation.h).

#include "sasl_client_transport.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <krb5/krb5.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <thrift/TConfiguration.h>
#include <thrift/transport/TSocket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include "hbingest/connectors/hbase_admin.h"
#include "hbingest/connectors/hbase_types.h"
#include "largest_allocation.h"
#include "sasl_frame.h"

namespace hbingest::connectors {
namespace {

using sasl::NegotiationStatus;

// Far below the 2 GiB the hostile gateways claim.
constexpr std::size_t kAllocationBound = 1024 * 1024;

// The fake security layer: a token is the plain bytes, each XOR 0x5a, behind a "T" (so a frame
// that was not wrapped does not unwrap). Packets are cyrus-sasl's: 4-byte length + token.
std::string fake_wrap(std::string_view plain) {
  std::string token = "T";
  for (const char c : plain) token.push_back(static_cast<char>(c ^ 0x5a));
  return token;
}
std::string fake_unwrap(std::string_view token) {
  if (token.empty() || token[0] != 'T') throw std::runtime_error("not a fake token");
  std::string plain;
  for (const char c : token.substr(1)) plain.push_back(static_cast<char>(c ^ 0x5a));
  return plain;
}

// Two rounds like GSSAPI's: "hello" answered by "challenge-1", then "layer" (the security layer
// choice) after "challenge-2", complete.
class FakeMechanism final : public SaslMechanism {
 public:
  FakeMechanism(unsigned ssf, std::size_t max_output) : ssf_(ssf), max_output_(max_output) {}
  std::string_view name() const override { return "FAKE"; }
  std::string start() override { return "hello"; }
  std::string step(const std::string& challenge) override {
    if (challenge == "challenge-1") return "";
    if (challenge == "challenge-2") {
      complete_ = true;
      return "layer";
    }
    throw SaslHandshakeError("fake mechanism: unexpected challenge '" + challenge + "'");
  }
  bool complete() const override { return complete_; }
  unsigned ssf() const override { return ssf_; }
  std::size_t max_output() const override { return max_output_; }
  std::size_t max_token_bytes() const override { return 1 << 20; }
  std::string_view encode(const char* data, std::size_t size) override {
    const std::string token = fake_wrap(std::string_view(data, size));
    std::uint8_t be[4];
    sasl::encode_frame_length(static_cast<std::uint32_t>(token.size()), be);
    packet_.assign(reinterpret_cast<const char*>(be), 4);
    packet_ += token;
    return packet_;
  }
  std::string_view decode(const char* data, std::size_t size) override {
    pending_.append(data, size);
    if (pending_.size() < 4) return {};
    const std::uint32_t length = sasl::decode_frame_length(reinterpret_cast<const std::uint8_t*>(pending_.data()));
    if (pending_.size() < 4 + length) return {};
    plain_ = fake_unwrap(std::string_view(pending_).substr(4, length));
    pending_.erase(0, 4 + length);
    return plain_;
  }

 private:
  unsigned ssf_;
  std::size_t max_output_;
  bool complete_ = false;
  std::string packet_;
  std::string pending_;
  std::string plain_;
};

// The gateway's end of one connection.
class Peer {
 public:
  explicit Peer(int fd) : fd_(fd) {}
  // `n` bytes, or what came before the client closed.
  std::string read(std::size_t n) {
    std::string out(n, '\0');
    std::size_t got = 0;
    while (got < n) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 5000) <= 0) break;
      const ssize_t r = ::recv(fd_, out.data() + got, n - got, 0);
      if (r <= 0) break;
      got += static_cast<std::size_t>(r);
    }
    out.resize(got);
    return out;
  }
  sasl::NegotiationMessage message() {
    const std::string header = read(5);
    if (header.size() < 5) throw std::runtime_error("client closed");
    sasl::NegotiationMessage m;
    m.status = static_cast<NegotiationStatus>(header[0]);
    m.payload = read(sasl::decode_frame_length(reinterpret_cast<const std::uint8_t*>(header.data() + 1)));
    return m;
  }
  std::string frame() {
    const std::string header = read(4);
    if (header.size() < 4) throw std::runtime_error("client closed");
    return read(sasl::decode_frame_length(reinterpret_cast<const std::uint8_t*>(header.data())));
  }
  void send(std::string_view bytes) { ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL); }
  void send(NegotiationStatus status, std::string_view payload) {
    send(sasl::encode_negotiation_message(status, payload));
  }
  void send_frame(std::string_view payload) {
    std::uint8_t be[4];
    sasl::encode_frame_length(static_cast<std::uint32_t>(payload.size()), be);
    send(std::string(reinterpret_cast<const char*>(be), 4) + std::string(payload));
  }
  // Java's server side of the fake mechanism's handshake.
  void handshake() {
    const auto start = message();
    EXPECT_EQ(start.status, NegotiationStatus::start);
    EXPECT_EQ(start.payload, "FAKE");
    const auto initial = message();
    EXPECT_EQ(initial.status, NegotiationStatus::ok);
    EXPECT_EQ(initial.payload, "hello");
    send(NegotiationStatus::ok, "challenge-1");
    const auto empty = message();
    EXPECT_EQ(empty.status, NegotiationStatus::ok);
    EXPECT_EQ(empty.payload, "");
    send(NegotiationStatus::ok, "challenge-2");
    const auto layer = message();
    EXPECT_EQ(layer.status, NegotiationStatus::complete);
    EXPECT_EQ(layer.payload, "layer");
    send(NegotiationStatus::complete, "");
  }

 private:
  int fd_;
};

// Serves one connection with `script`, on its own thread.
class FakeGateway {
 public:
  explicit FakeGateway(std::function<void(Peer&)> script) : script_(std::move(script)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listen_fd_, 4) != 0) {
      throw std::runtime_error("fake gateway: cannot listen on 127.0.0.1");
    }
    socklen_t length = sizeof address;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      pollfd listening{listen_fd_, POLLIN, 0};
      if (::poll(&listening, 1, 10000) <= 0) return;
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      Peer peer(fd);
      try {
        script_(peer);
      } catch (const std::exception&) {
        // The client hung up: the test checks what it saw.
      }
      ::shutdown(fd, SHUT_WR);
      peer.read(1);  // until the client closes
      ::close(fd);
    });
  }
  ~FakeGateway() {
    join();
    ::close(listen_fd_);
  }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  FakeGateway(const FakeGateway&) = delete;
  FakeGateway& operator=(const FakeGateway&) = delete;

  int port() const { return port_; }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  std::function<void(Peer&)> script_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

struct Client {
  std::shared_ptr<apache::thrift::transport::TSocket> socket;
  std::shared_ptr<SaslClientTransport> transport;
};

Client client_of(const FakeGateway& gateway, unsigned ssf = 0, std::size_t max_output = 64,
                 SaslQop required = SaslQop::authentication, int read_timeout_ms = 5000) {
  auto config = std::make_shared<apache::thrift::TConfiguration>();
  auto socket = std::make_shared<apache::thrift::transport::TSocket>("127.0.0.1", gateway.port(), config);
  socket->setRecvTimeout(read_timeout_ms);
  auto transport = std::make_shared<SaslClientTransport>(
      socket, [=] { return std::make_unique<FakeMechanism>(ssf, max_output); }, "FAKE to " + gateway.endpoint(),
      required, 1 << 20, config);
  return {socket, transport};
}

std::string handshake_error(Client& client) {
  test_support::reset_largest_allocation();
  try {
    client.transport->open();
  } catch (const SaslHandshakeError& e) {
    if (test_support::counts_allocations()) {
      EXPECT_LT(test_support::largest_allocation(), kAllocationBound) << e.what();
    }
    client.transport->close();
    return e.what();
  }
  ADD_FAILURE() << "the handshake succeeded";
  client.transport->close();
  return "";
}

TEST(SaslTransport, HandshakeThenPlainFrames) {
  FakeGateway gateway([](Peer& peer) {
    peer.handshake();
    EXPECT_EQ(peer.frame(), "ping, a request of some length");
    peer.send_frame("pong");
  });
  Client client = client_of(gateway);
  client.transport->open();
  EXPECT_EQ(client.transport->negotiated_qop(), SaslQop::authentication);
  const std::string request = "ping, a request of some length";
  client.transport->write(reinterpret_cast<const uint8_t*>(request.data()), 10);
  client.transport->write(reinterpret_cast<const uint8_t*>(request.data()) + 10,
                          static_cast<uint32_t>(request.size() - 10));
  client.transport->flush();  // both writes in one frame
  std::string reply(4, '\0');
  client.transport->readAll(reinterpret_cast<uint8_t*>(reply.data()), 4);
  EXPECT_EQ(reply, "pong");
  client.transport->close();
}

TEST(SaslTransport, WrappedFramesAreOnePacketEachBothWays) {
  // 100 bytes through a layer that takes 40 per packet: three frames out, each a whole token that
  // the gateway unwraps on its own (as Java's TSaslTransport does); one wrapped frame back.
  std::string request;
  for (int i = 0; i < 100; ++i) request.push_back(static_cast<char>('a' + i % 26));
  FakeGateway gateway([&](Peer& peer) {
    peer.handshake();
    std::string received;
    for (const std::size_t size : {40, 40, 20}) {
      const std::string token = peer.frame();
      const std::string plain = fake_unwrap(token);
      EXPECT_EQ(plain.size(), size);
      received += plain;
    }
    EXPECT_EQ(received, request);
    peer.send_frame(fake_wrap("a reply in one token"));
  });
  Client client = client_of(gateway, /*ssf=*/256, /*max_output=*/40, SaslQop::privacy);
  client.transport->open();
  EXPECT_EQ(client.transport->negotiated_qop(), SaslQop::privacy);
  client.transport->write(reinterpret_cast<const uint8_t*>(request.data()), static_cast<uint32_t>(request.size()));
  client.transport->flush();
  std::string reply(20, '\0');
  client.transport->readAll(reinterpret_cast<uint8_t*>(reply.data()), 20);
  EXPECT_EQ(reply, "a reply in one token");
  client.transport->close();
}

TEST(SaslTransport, LessProtectionThanRequiredIsRefused) {
  FakeGateway gateway([](Peer& peer) { peer.handshake(); });
  Client client = client_of(gateway, /*ssf=*/1, 64, SaslQop::privacy);
  const std::string message = handshake_error(client);
  EXPECT_NE(message.find("FAKE to " + gateway.endpoint() +
                         ": the gateway offers at most integrity (auth-int) (its "
                         "hbase.thrift.security.qop) but hbase.sasl.qop is privacy (auth-conf): set them equal"),
            std::string::npos)
      << message;
}

TEST(SaslTransport, MoreProtectionThanConfiguredIsRefusedToo) {
  FakeGateway gateway([](Peer& peer) { peer.handshake(); });
  Client client = client_of(gateway, /*ssf=*/256, 64, SaslQop::integrity);
  const std::string message = handshake_error(client);
  EXPECT_NE(message.find("the gateway offers privacy (auth-conf) (its hbase.thrift.security.qop) but hbase.sasl.qop "
                         "is integrity (auth-int): set them equal"),
            std::string::npos)
      << message;
}

TEST(SaslTransport, ConnectionDroppedMidNegotiation) {
  FakeGateway gateway([](Peer& peer) {
    peer.message();
    peer.message();
    peer.send(NegotiationStatus::ok, "challenge-1");
    peer.message();
    peer.send(std::string("\x02\x00\x00", 3));  // the next header, cut short
  });
  Client client = client_of(gateway);
  const std::string message = handshake_error(client);
  EXPECT_NE(message.find("FAKE to " + gateway.endpoint() +
                         ": the gateway closed the connection while hbingest waited for the gateway's answer to FAKE "
                         "step 1 (3 of the 5 bytes of a SASL message header)"),
            std::string::npos)
      << message;
}

TEST(SaslTransport, TwoGibNegotiationLengthIsRefusedUnread) {
  FakeGateway gateway([](Peer& peer) {
    peer.message();
    peer.message();
    peer.send(std::string("\x02\x80\x00\x00\x00", 5));
    peer.send(std::string(64 * 1024, 'x'));  // whatever follows is never read
  });
  Client client = client_of(gateway);
  const std::string message = handshake_error(client);
  EXPECT_NE(message.find("SASL message of 2147483648 bytes while hbingest waited for the answer to SASL START"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("refused unread"), std::string::npos) << message;
}

TEST(SaslTransport, BadAnswerCarriesTheGatewaysMessage) {
  FakeGateway gateway([](Peer& peer) {
    peer.message();
    peer.message();
    peer.send(NegotiationStatus::bad, "GSS initiate failed\n[Caused by GSSException: Defective token]");
  });
  Client client = client_of(gateway);
  const std::string message = handshake_error(client);
  EXPECT_NE(message.find("the gateway refused the handshake (BAD while hbingest waited for the answer to SASL START): "
                         "'GSS initiate failed\\x0a[Caused by GSSException: Defective token]'"),
            std::string::npos)
      << message;
}

TEST(SaslTransport, MechanismFailureIsToldToTheGatewayAndReported) {
  std::string told;
  FakeGateway gateway([&](Peer& peer) {
    peer.message();
    peer.message();
    peer.send(NegotiationStatus::ok, "a challenge the mechanism refuses");
    const auto bad = peer.message();
    EXPECT_EQ(bad.status, NegotiationStatus::bad);
    told = bad.payload;
  });
  {
    Client client = client_of(gateway);
    const std::string message = handshake_error(client);
    EXPECT_NE(message.find("FAKE step 1 failed: fake mechanism: unexpected challenge"), std::string::npos) << message;
  }
  gateway.join();  // `told` is written
  EXPECT_NE(told.find("unexpected challenge"), std::string::npos) << told;
}

TEST(SaslTransport, APlainGatewayThatWaitsIsNamed) {
  // A plain buffered gateway reads our START as the start of a call and waits for the rest.
  FakeGateway gateway([](Peer& peer) { peer.read(4096); });
  Client client = client_of(gateway, 0, 64, SaslQop::authentication, /*read_timeout_ms=*/300);
  const std::string message = handshake_error(client);
  EXPECT_NE(message.find("no answer within hbase.read_timeout while hbingest waited for the answer to SASL START: a "
                         "plain (not kerberized) Thrift gateway"),
            std::string::npos)
      << message;
}

TEST(SaslTransport, AnHttpAnswerIsNamed) {
  FakeGateway gateway([](Peer& peer) {
    peer.message();
    peer.send("HTTP/1.1 400 Bad Request\r\n\r\n");
  });
  Client client = client_of(gateway);
  const std::string message = handshake_error(client);
  EXPECT_NE(message.find("status byte 0x48"), std::string::npos) << message;
  EXPECT_NE(message.find("(it sent 'HTTP/')"), std::string::npos) << message;
  EXPECT_NE(message.find("If not, set hbase.sasl.mechanism: none"), std::string::npos) << message;
}

TEST(SaslTransport, HostileDataFramesAfterTheHandshakeAreBounded) {
  FakeGateway gateway([](Peer& peer) {
    peer.handshake();
    peer.frame();
    peer.send(std::string("\x7f\xff\xff\xff", 4));
  });
  Client client = client_of(gateway);
  client.transport->open();
  client.transport->write(reinterpret_cast<const uint8_t*>("x"), 1);
  client.transport->flush();
  test_support::reset_largest_allocation();
  uint8_t byte = 0;
  try {
    client.transport->read(&byte, 1);
    ADD_FAILURE() << "read a 2 GiB frame";
  } catch (const apache::thrift::transport::TTransportException& e) {
    EXPECT_NE(std::string(e.what()).find("SASL frame of 2147483647 bytes from the gateway: above the 1048576 bytes"),
              std::string::npos)
        << e.what();
  }
  if (test_support::counts_allocations()) {
    EXPECT_LT(test_support::largest_allocation(), kAllocationBound);
  }
  client.transport->close();
}

TEST(SaslTransport, CompleteBeforeTheMechanismIsCompleteIsRefused) {
  FakeGateway gateway([](Peer& peer) {
    peer.message();
    peer.message();
    peer.send(NegotiationStatus::complete, "challenge-1");  // the fake needs a second round
  });
  Client client = client_of(gateway);
  const std::string message = handshake_error(client);
  EXPECT_NE(message.find("the gateway said COMPLETE before the FAKE exchange was complete"), std::string::npos)
      << message;
}

TEST(SaslTransport, BadInsteadOfTheFinalCompleteCarriesItsMessage) {
  FakeGateway gateway([](Peer& peer) {
    peer.message();
    peer.message();
    peer.send(NegotiationStatus::ok, "challenge-1");
    peer.message();
    peer.send(NegotiationStatus::ok, "challenge-2");
    peer.message();  // our COMPLETE
    peer.send(NegotiationStatus::bad, "authorization failed for hbingest");
  });
  Client client = client_of(gateway);
  const std::string message = handshake_error(client);
  EXPECT_NE(message.find("BAD while hbingest waited for the gateway's COMPLETE): 'authorization failed for hbingest'"),
            std::string::npos)
      << message;
  EXPECT_FALSE(client.transport->isOpen());
}

TEST(SaslTransport, AWrappedFrameThatDoesNotUnwrapEndsTheRead) {
  FakeGateway gateway([](Peer& peer) {
    peer.handshake();
    peer.frame();
    peer.send_frame("not a fake token");  // sent in clear where a token is due
  });
  Client client = client_of(gateway, /*ssf=*/256, 64, SaslQop::privacy);
  client.transport->open();
  client.transport->write(reinterpret_cast<const uint8_t*>("x"), 1);
  client.transport->flush();
  uint8_t byte = 0;
  EXPECT_ANY_THROW(client.transport->read(&byte, 1));
  client.transport->close();
}

// A FILE credential cache holding a TGT for `client` that expired a minute ago (the ticket's bytes
// are never sent: the expiry is found first).
void write_expired_tgt(const std::string& ccache, const std::string& client) {
  krb5_context context = nullptr;
  ASSERT_EQ(krb5_init_context(&context), 0);
  krb5_principal me = nullptr;
  krb5_principal tgs = nullptr;
  krb5_ccache cache = nullptr;
  ASSERT_EQ(krb5_parse_name(context, client.c_str(), &me), 0);
  ASSERT_EQ(krb5_parse_name(context, "krbtgt/HBSTACK.TEST@HBSTACK.TEST", &tgs), 0);
  ASSERT_EQ(krb5_cc_resolve(context, ccache.c_str(), &cache), 0);
  ASSERT_EQ(krb5_cc_initialize(context, cache, me), 0);
  krb5_creds creds{};
  creds.client = me;
  creds.server = tgs;
  const auto now = static_cast<krb5_timestamp>(std::time(nullptr));
  creds.times.authtime = creds.times.starttime = now - 3600;
  creds.times.endtime = now - 60;
  char key[16] = {};
  creds.keyblock.enctype = ENCTYPE_AES128_CTS_HMAC_SHA1_96;
  creds.keyblock.length = sizeof key;
  creds.keyblock.contents = reinterpret_cast<krb5_octet*>(key);
  char ticket[] = "not a ticket";
  creds.ticket.length = sizeof ticket;
  creds.ticket.data = ticket;
  EXPECT_EQ(krb5_cc_store_cred(context, cache, &creds), 0);
  krb5_cc_close(context, cache);
  krb5_free_principal(context, tgs);
  krb5_free_principal(context, me);
  krb5_free_context(context);
}

// Through Thrift2Connection with the real GSSAPI mechanism: without usable credentials the link
// fails before a byte goes to the gateway, in one line naming the endpoint, the principals and the
// cause.
TEST(SaslTransport, ThroughTheConnectionWithoutCredentials) {
  const std::string dir = ::testing::TempDir();
  const std::string krb5_conf = dir + "/sasl_transport_test_krb5.conf";
  const auto write_conf = [&](bool canonicalize) {
    FILE* f = std::fopen(krb5_conf.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fprintf(f, "[libdefaults]\n default_realm = HBSTACK.TEST\n dns_canonicalize_hostname = %s\n rdns = %s\n",
                 canonicalize ? "true" : "false", canonicalize ? "true" : "false");
    std::fclose(f);
  };
  ::setenv("KRB5_CONFIG", krb5_conf.c_str(), 1);
  Thrift2Options options;
  options.read_timeout = std::chrono::milliseconds(2000);
  options.sasl.enabled = true;
  options.sasl.principal = "hbingest@HBSTACK.TEST";
  options.sasl.ccache = "FILE:" + dir + "/sasl_transport_test_no_such_ccache";
  {
    write_conf(false);
    FakeGateway gateway([](Peer& peer) { peer.read(1); });
    options.endpoints = {gateway.endpoint()};
    try {
      HBaseAdmin(options).table_exists("default", "events");
      ADD_FAILURE() << "no credentials, yet connected";
    } catch (const HBaseError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("Kerberos (SASL GSSAPI) to Thrift2 gateway " + gateway.endpoint() +
                             " as 'hbingest@HBSTACK.TEST' for hbase/127.0.0.1: no usable Kerberos credentials in "
                             "credential cache '" +
                             options.sasl.ccache + "'"),
                std::string::npos)
          << message;
      EXPECT_TRUE(e.retriable()) << "a running daemon recovers once the login does";
    }
  }
  {
    // A cache whose TGT has expired (a login that stopped renewing): named as such, no KDC asked.
    write_conf(false);
    options.sasl.ccache = "FILE:" + dir + "/sasl_transport_test_expired_ccache";
    write_expired_tgt(options.sasl.ccache, "hbingest@HBSTACK.TEST");
    FakeGateway gateway([](Peer& peer) { peer.read(1); });
    options.endpoints = {gateway.endpoint()};
    try {
      HBaseAdmin(options).table_exists("default", "events");
      ADD_FAILURE() << "an expired ticket, yet connected";
    } catch (const HBaseError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("for hbase/127.0.0.1: the Kerberos ticket (TGT) in credential cache '" +
                             options.sasl.ccache + "' has expired"),
                std::string::npos)
          << message;
    }
  }
  {
    // A krb5.conf that lets DNS rewrite the host: refused before any ticket is asked for.
    write_conf(true);
    FakeGateway gateway([](Peer& peer) { peer.read(1); });
    options.endpoints = {gateway.endpoint()};
    try {
      HBaseAdmin(options).table_exists("default", "events");
      ADD_FAILURE() << "connected";
    } catch (const HBaseError& e) {
      const std::string message = e.what();
      // /etc/hosts names 127.0.0.1 localhost: rdns turns the endpoint's address into that name.
      EXPECT_NE(message.find("for hbase/127.0.0.1: Kerberos would ask for a ticket for hbase/localhost instead of "
                             "hbase/127.0.0.1"),
                std::string::npos)
          << message;
      EXPECT_NE(message.find("set dns_canonicalize_hostname = false and rdns = false"), std::string::npos) << message;
    }
  }
  ::unsetenv("KRB5_CONFIG");
}

}  // namespace
}  // namespace hbingest::connectors
