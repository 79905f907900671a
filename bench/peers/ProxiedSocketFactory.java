// The Java peer's way through bench/compare.sh --link-latency: its HBase client talks to the region
// servers (and the master) at the addresses HBase publishes in hbase:meta and ZooKeeper, which a
// proxy cannot change. So the peer's connections are redirected here instead: with
// hbase.rpc.client.impl = BlockingRpcClient, the client makes its sockets with Hadoop's
// hadoop.rpc.socket.factory.class.default, this class, which connects a socket meant for a mapped
// port to its proxy. The map comes from the system property bench.proxy.ports, "PORT=HOST:PORT,...";
// a port not in it is connected as asked.
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.util.HashMap;
import java.util.Map;
import javax.net.SocketFactory;

public final class ProxiedSocketFactory extends SocketFactory {
  private static final Map<Integer, InetSocketAddress> PORTS = parse(System.getProperty("bench.proxy.ports", ""));

  static Map<Integer, InetSocketAddress> parse(String spec) {
    Map<Integer, InetSocketAddress> ports = new HashMap<>();
    for (String entry : spec.split(",")) {
      if (entry.isBlank()) continue;
      String[] portAndTarget = entry.split("=", 2);
      String[] hostAndPort = portAndTarget[1].split(":", 2);
      ports.put(Integer.parseInt(portAndTarget[0].trim()),
          InetSocketAddress.createUnresolved(hostAndPort[0], Integer.parseInt(hostAndPort[1])));
    }
    return ports;
  }

  static SocketAddress redirect(SocketAddress endpoint) {
    if (endpoint instanceof InetSocketAddress) {
      InetSocketAddress target = PORTS.get(((InetSocketAddress) endpoint).getPort());
      if (target != null) return new InetSocketAddress(target.getHostString(), target.getPort());
    }
    return endpoint;
  }

  private static final class RedirectedSocket extends Socket {
    @Override
    public void connect(SocketAddress endpoint, int timeout) throws IOException {
      super.connect(redirect(endpoint), timeout);
    }
  }

  @Override
  public Socket createSocket() {
    return new RedirectedSocket();
  }

  @Override
  public Socket createSocket(String host, int port) throws IOException {
    Socket socket = createSocket();
    socket.connect(new InetSocketAddress(host, port));
    return socket;
  }

  @Override
  public Socket createSocket(InetAddress host, int port) throws IOException {
    Socket socket = createSocket();
    socket.connect(new InetSocketAddress(host, port));
    return socket;
  }

  @Override
  public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
    Socket socket = createSocket();
    socket.bind(new InetSocketAddress(localHost, localPort));
    socket.connect(new InetSocketAddress(host, port));
    return socket;
  }

  @Override
  public Socket createSocket(InetAddress host, int port, InetAddress localHost, int localPort) throws IOException {
    Socket socket = createSocket();
    socket.bind(new InetSocketAddress(localHost, localPort));
    socket.connect(new InetSocketAddress(host, port));
    return socket;
  }
}
