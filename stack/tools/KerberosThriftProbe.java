package hbstack;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.security.auth.Subject;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.Configuration;
import javax.security.auth.login.LoginContext;
import javax.security.sasl.Sasl;
import org.apache.hadoop.hbase.thrift2.generated.TColumnFamilyDescriptor;
import org.apache.hadoop.hbase.thrift2.generated.TColumnValue;
import org.apache.hadoop.hbase.thrift2.generated.TGet;
import org.apache.hadoop.hbase.thrift2.generated.THBaseService;
import org.apache.hadoop.hbase.thrift2.generated.TPut;
import org.apache.hadoop.hbase.thrift2.generated.TResult;
import org.apache.hadoop.hbase.thrift2.generated.TTableDescriptor;
import org.apache.hadoop.hbase.thrift2.generated.TTableName;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TSaslClientTransport;
import org.apache.thrift.transport.TSocket;

/**
 * A Java peer of the kerberized Thrift2 gateway (hbstack component thrift2krb): logs in from a keytab
 * (JAAS Krb5LoginModule, into its own Subject, never a ticket cache), opens libthrift's
 * TSaslClientTransport with GSSAPI at the given QOP (what HBase's own Thrift clients do), and talks
 * THBaseService over the binary protocol.
 *
 * <pre>
 * KerberosThriftProbe --host H --port P --keytab K --principal P --qop auth|auth-int|auth-conf[,...]
 *                     [--service hbase] [--server-host localhost] MODE
 * MODE: --ping              tableExists(hbase:meta) over SASL
 *       --table NAME        create NAME (family 'e') unless it exists, put a cell, get it back
 *       --plain             a plain (non-SASL) tableExists call, which must fail: prints the bytes
 *                           the gateway answered with (hex) and exits 0 only if it did fail
 * </pre>
 *
 * One line on stdout on success; the reason on stderr and exit 1 otherwise.
 */
public final class KerberosThriftProbe {
  private KerberosThriftProbe() {}

  private static String host = "127.0.0.1";
  private static int port;
  private static String keytab;
  private static String principal;
  private static String qop = "auth-conf";
  private static String service = "hbase";
  private static String serverHost = "localhost";

  public static void main(String[] args) {
    String mode = null;
    String table = null;
    try {
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--host": host = args[++i]; break;
          case "--port": port = Integer.parseInt(args[++i]); break;
          case "--keytab": keytab = args[++i]; break;
          case "--principal": principal = args[++i]; break;
          case "--qop": qop = args[++i]; break;
          case "--service": service = args[++i]; break;
          case "--server-host": serverHost = args[++i]; break;
          case "--ping": mode = "ping"; break;
          case "--plain": mode = "plain"; break;
          case "--table": mode = "table"; table = args[++i]; break;
          default: throw new IllegalArgumentException("unknown argument " + args[i]);
        }
      }
      if (mode == null || port == 0) {
        throw new IllegalArgumentException("need --port and one of --ping, --table NAME, --plain");
      }
      if (mode.equals("plain")) {
        plain();
        return;
      }
      if (keytab == null || principal == null) {
        throw new IllegalArgumentException("need --keytab and --principal");
      }
      String result = overSasl(mode, table);
      System.out.println(result);
    } catch (Throwable e) {
      StringBuilder why = new StringBuilder(e.toString());
      for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
        why.append(" <- ").append(c);
      }
      System.err.println("thrift2krb " + host + ":" + port + ": " + why);
      System.exit(1);
    }
  }

  private static Subject login() throws Exception {
    Map<String, String> opts = new HashMap<>();
    opts.put("useKeyTab", "true");
    opts.put("keyTab", keytab);
    opts.put("principal", principal);
    opts.put("storeKey", "false");
    opts.put("doNotPrompt", "true");
    opts.put("useTicketCache", "false");
    opts.put("refreshKrb5Config", "true");
    Configuration jaas = new Configuration() {
      @Override
      public AppConfigurationEntry[] getAppConfigurationEntry(String name) {
        return new AppConfigurationEntry[] {
          new AppConfigurationEntry("com.sun.security.auth.module.Krb5LoginModule",
              AppConfigurationEntry.LoginModuleControlFlag.REQUIRED, opts)
        };
      }
    };
    LoginContext lc = new LoginContext("hbstack", new Subject(), null, jaas);
    lc.login();
    return lc.getSubject();
  }

  private static ByteBuffer bytes(String s) {
    return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
  }

  private static String overSasl(String mode, String table) throws Exception {
    Subject subject = login();
    return Subject.doAs(subject, (PrivilegedExceptionAction<String>) () -> {
      Map<String, String> props = new HashMap<>();
      props.put(Sasl.QOP, qop);
      props.put(Sasl.SERVER_AUTH, "true");
      TSocket socket = new TSocket(new org.apache.thrift.TConfiguration(), host, port, 30000);
      TSaslClientTransport sasl =
          new TSaslClientTransport("GSSAPI", null, service, serverHost, props, null, socket);
      sasl.open();
      try {
        String negotiated = (String) sasl.getSaslClient().getNegotiatedProperty(Sasl.QOP);
        THBaseService.Client client = new THBaseService.Client(new TBinaryProtocol(sasl));
        String who = principal + " -> " + service + "/" + serverHost + " qop=" + negotiated;
        if (mode.equals("ping")) {
          TTableName meta = new TTableName(bytes("meta"));
          meta.setNs(bytes("hbase"));
          if (!client.tableExists(meta)) {
            throw new IllegalStateException("tableExists(hbase:meta) answered false");
          }
          return "thrift2krb: tableExists(hbase:meta) ok, " + who;
        }
        TTableName name = new TTableName(bytes(table));
        if (!client.tableExists(name)) {
          TTableDescriptor desc = new TTableDescriptor(name);
          List<TColumnFamilyDescriptor> families = new ArrayList<>();
          families.add(new TColumnFamilyDescriptor(bytes("e")));
          desc.setColumns(families);
          client.createTable(desc, new ArrayList<>());
        }
        String value = "v-" + System.nanoTime();
        List<TColumnValue> cells = new ArrayList<>();
        cells.add(new TColumnValue(bytes("e"), bytes("q"), bytes(value)));
        client.put(bytes(table), new TPut(bytes("row-1"), cells));
        TResult r = client.get(bytes(table), new TGet(bytes("row-1")));
        if (r.getColumnValuesSize() != 1) {
          throw new IllegalStateException("get returned " + r.getColumnValuesSize() + " cells");
        }
        String got = new String(r.getColumnValues().get(0).getValue(), StandardCharsets.UTF_8);
        if (!got.equals(value)) {
          throw new IllegalStateException("get returned '" + got + "', put '" + value + "'");
        }
        return "thrift2krb: " + table + " e:q put and get ok, " + who;
      } finally {
        sasl.close();
      }
    });
  }

  /** A plain Thrift call (no SASL): what a client that does not know the gateway is kerberized sends. */
  private static void plain() throws Exception {
    // TBinaryProtocol, strict: tableExists(TTableName{ns="hbase", qualifier="meta"}), seqid 1.
    ByteArrayOutputStream call = new ByteArrayOutputStream();
    TBinaryProtocol proto = new TBinaryProtocol(new org.apache.thrift.transport.TIOStreamTransport(call));
    proto.writeMessageBegin(new org.apache.thrift.protocol.TMessage(
        "tableExists", org.apache.thrift.protocol.TMessageType.CALL, 1));
    THBaseService.tableExists_args a = new THBaseService.tableExists_args();
    TTableName meta = new TTableName(bytes("meta"));
    meta.setNs(bytes("hbase"));
    a.setTableName(meta);
    a.write(proto);
    proto.writeMessageEnd();
    ByteArrayOutputStream got = new ByteArrayOutputStream();
    String end;
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host, port), 5000);
      s.setSoTimeout(3000);
      OutputStream out = s.getOutputStream();
      out.write(call.toByteArray());
      out.flush();
      InputStream in = s.getInputStream();
      byte[] buf = new byte[4096];
      try {
        int n;
        while ((n = in.read(buf)) > 0 && got.size() < 65536) {
          got.write(buf, 0, n);
        }
        end = "then closed the connection";
      } catch (SocketTimeoutException e) {
        end = "then nothing for 3 s (connection still open)";
      } catch (java.io.IOException e) {
        end = "then " + e;
      }
    }
    byte[] b = got.toByteArray();
    StringBuilder hex = new StringBuilder();
    for (byte x : b) {
      hex.append(String.format("%02x", x));
    }
    StringBuilder text = new StringBuilder();
    for (byte x : b) {
      text.append(x >= 0x20 && x < 0x7f ? (char) x : '.');
    }
    // A Thrift reply starts 80 01 00 02 (strict binary protocol, REPLY).
    boolean reply = b.length >= 4 && (b[0] & 0xff) == 0x80 && b[1] == 1 && b[3] == 2;
    String line = "thrift2krb plain call: answered " + b.length + " bytes [" + hex + "] \"" + text + "\" " + end;
    if (reply) {
      System.err.println(line + ": a Thrift reply, the gateway does not require SASL");
      System.exit(1);
    }
    System.out.println(line);
  }
}
