package hbstack;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.RegionInfo;

/**
 * hbstack's region admin: what fault tests do to a table's regions (list, move, split, merge, switch
 * the balancer), through HBase's Java Admin API against the stack's cluster (hbase-site.xml first on
 * the classpath). Every command prints JSON lines: one per listed item, then one status line that
 * has "ok" (and "error" when it failed). Row keys are lowercase hex, "" for the table's first/last.
 *
 * <pre>
 *   servers                          live region servers and how many regions each holds
 *   regions TABLE                    the table's online regions, by start key, with their server
 *   move REGION [SERVER]             move a region (encoded name) to SERVER ("host,port[,startcode]"
 *                                    or "host:port"; default: the next other live server) and wait
 *                                    until it is online there
 *   split TABLE ROW                  split the region holding ROW (hex) at ROW, wait for both daughters
 *   merge REGION REGION              merge two adjacent regions, wait for the merged one
 *   balancer on|off                  switch the balancer (prints the previous state)
 *   shell                            read commands from stdin, one per line, until EOF
 * </pre>
 *
 * Moves, splits and merges return only when the master's procedure finished and the resulting
 * regions are online on their region servers, and say how long that took ("ms").
 */
public final class RegionAdmin {
  private static final long WAIT_MS = 120_000;

  private final Admin admin;
  private final PrintStream out;

  private RegionAdmin(Admin admin, PrintStream out) {
    this.admin = admin;
    this.out = out;
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      System.err.println("usage: RegionAdmin servers | regions TABLE | move REGION [SERVER] | split TABLE ROW"
          + " | merge REGION REGION | balancer on|off | shell");
      System.exit(2);
    }
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    Configuration conf = HBaseConfiguration.create();
    try (Connection connection = ConnectionFactory.createConnection(conf);
        Admin admin = connection.getAdmin()) {
      RegionAdmin tool = new RegionAdmin(admin, out);
      if (args[0].equals("shell")) {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null;) {
          String[] words = line.trim().split("\\s+");
          if (words.length > 0 && !words[0].isEmpty()) {
            tool.run(words);
          }
        }
      } else if (!tool.run(args)) {
        System.exit(1);
      }
    }
  }

  /** Runs one command; prints its lines and its status line. */
  private boolean run(String[] words) {
    String command = words[0];
    long started = System.nanoTime();
    try {
      Json status = switch (command) {
        case "servers" -> servers(words);
        case "regions" -> regions(words);
        case "move" -> move(words);
        case "split" -> split(words);
        case "merge" -> merge(words);
        case "balancer" -> balancer(words);
        default -> throw new IllegalArgumentException("unknown command '" + command
            + "' (servers, regions, move, split, merge, balancer)");
      };
      out.println(status.put("ok", true).put("command", command)
          .put("ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)));
      return true;
    } catch (Exception e) {
      Throwable cause = e;
      while (cause.getCause() != null && cause.getMessage() == null) {
        cause = cause.getCause();
      }
      String message = cause.getClass().getSimpleName() + ": " + cause.getMessage();
      out.println(new Json().put("ok", false).put("command", command).put("error", message.split("\n", 2)[0]));
      return false;
    }
  }

  private static void arity(String[] words, int min, int max, String usage) {
    if (words.length - 1 < min || words.length - 1 > max) {
      throw new IllegalArgumentException("usage: " + usage);
    }
  }

  // ---- commands

  private Json servers(String[] words) throws Exception {
    arity(words, 0, 0, "servers");
    List<ServerName> servers = liveServers();
    for (ServerName server : servers) {
      out.println(new Json().put("server", server.getServerName()).put("port", server.getPort())
          .put("regions", admin.getRegions(server).size()));
    }
    return new Json().put("servers", servers.size());
  }

  private Json regions(String[] words) throws Exception {
    arity(words, 1, 1, "regions TABLE");
    TableName table = existing(words[1]);
    Map<RegionInfo, ServerName> regions = onlineRegions(table);
    for (Map.Entry<RegionInfo, ServerName> entry : regions.entrySet()) {
      out.println(describe(entry.getKey(), entry.getValue()));
    }
    return new Json().put("table", table.getNameAsString()).put("regions", regions.size());
  }

  private Json move(String[] words) throws Exception {
    arity(words, 1, 2, "move REGION [SERVER]");
    String encoded = words[1];
    ServerName from = serverOf(encoded);
    if (from == null) {
      throw new IllegalArgumentException("region " + encoded + " is not online on any live region server");
    }
    List<ServerName> servers = liveServers();
    ServerName to;
    if (words.length > 2) {
      to = resolve(words[2], servers);
    } else {
      // The next live server after the current one, so repeated moves go round the servers.
      int at = servers.indexOf(from);
      to = servers.get((at + 1) % servers.size());
      if (to.equals(from)) {
        throw new IllegalStateException("only one live region server: nowhere to move " + encoded);
      }
    }
    admin.move(encoded.getBytes(StandardCharsets.UTF_8), to);
    ServerName target = to;
    waitUntil(() -> onlineOn(encoded, target), "region " + encoded + " online on " + target);
    return new Json().put("region", encoded).put("from", from.getServerName()).put("to", to.getServerName());
  }

  private Json split(String[] words) throws Exception {
    arity(words, 2, 2, "split TABLE ROW");
    TableName table = existing(words[1]);
    byte[] row = fromHex(words[2]);
    RegionInfo parent = null;
    for (RegionInfo region : onlineRegions(table).keySet()) {
      if (region.containsRow(row)) {
        parent = region;
      }
    }
    if (parent == null) {
      throw new IllegalStateException("no online region of " + table + " holds row " + words[2]);
    }
    if (Arrays.equals(parent.getStartKey(), row)) {
      throw new IllegalArgumentException("row " + words[2] + " is already where region "
          + parent.getEncodedName() + " starts");
    }
    byte[] parentName = parent.getRegionName();
    untilAccepted(() -> admin.splitRegionAsync(parentName, row).get(WAIT_MS, TimeUnit.MILLISECONDS));
    RegionInfo split = parent;
    waitUntil(() -> {
      Map<RegionInfo, ServerName> now = onlineRegions(table);
      boolean left = false;
      boolean right = false;
      for (RegionInfo region : now.keySet()) {
        if (region.getEncodedName().equals(split.getEncodedName())) {
          return false;
        }
        left |= Arrays.equals(region.getStartKey(), split.getStartKey()) && Arrays.equals(region.getEndKey(), row);
        right |= Arrays.equals(region.getStartKey(), row) && Arrays.equals(region.getEndKey(), split.getEndKey());
      }
      return left && right;
    }, "both daughters of " + split.getEncodedName() + " online");
    for (Map.Entry<RegionInfo, ServerName> entry : onlineRegions(table).entrySet()) {
      byte[] start = entry.getKey().getStartKey();
      if (Arrays.equals(start, parent.getStartKey()) || Arrays.equals(start, row)) {
        out.println(describe(entry.getKey(), entry.getValue()).put("daughter_of", parent.getEncodedName()));
      }
    }
    return new Json().put("table", table.getNameAsString()).put("parent", parent.getEncodedName())
        .put("row", words[2]);
  }

  private Json merge(String[] words) throws Exception {
    arity(words, 2, 2, "merge REGION REGION");
    RegionInfo first = null;
    RegionInfo second = null;
    for (ServerName server : liveServers()) {
      for (RegionInfo region : admin.getRegions(server)) {
        if (region.getEncodedName().equals(words[1])) {
          first = region;
        }
        if (region.getEncodedName().equals(words[2])) {
          second = region;
        }
      }
    }
    if (first == null || second == null) {
      throw new IllegalArgumentException("region " + (first == null ? words[1] : words[2]) + " is not online");
    }
    if (RegionInfo.COMPARATOR.compare(first, second) > 0) {
      RegionInfo swap = first;
      first = second;
      second = swap;
    }
    if (!Arrays.equals(first.getEndKey(), second.getStartKey())) {
      throw new IllegalArgumentException("regions " + first.getEncodedName() + " and " + second.getEncodedName()
          + " are not adjacent");
    }
    byte[][] pair = {first.getEncodedNameAsBytes(), second.getEncodedNameAsBytes()};
    untilAccepted(() -> admin.mergeRegionsAsync(pair, false).get(WAIT_MS, TimeUnit.MILLISECONDS));
    TableName table = first.getTable();
    byte[] start = first.getStartKey();
    byte[] end = second.getEndKey();
    RegionInfo[] merged = new RegionInfo[1];
    ServerName[] where = new ServerName[1];
    waitUntil(() -> {
      for (Map.Entry<RegionInfo, ServerName> entry : onlineRegions(table).entrySet()) {
        RegionInfo region = entry.getKey();
        if (Arrays.equals(region.getStartKey(), start) && Arrays.equals(region.getEndKey(), end)) {
          merged[0] = region;
          where[0] = entry.getValue();
          return true;
        }
      }
      return false;
    }, "merged region " + toHex(start) + ".." + toHex(end) + " online");
    out.println(describe(merged[0], where[0]).put("merged_from", first.getEncodedName() + "," + second.getEncodedName()));
    return new Json().put("table", table.getNameAsString()).put("region", merged[0].getEncodedName());
  }

  private Json balancer(String[] words) throws Exception {
    arity(words, 1, 1, "balancer on|off");
    if (!words[1].equals("on") && !words[1].equals("off")) {
      throw new IllegalArgumentException("usage: balancer on|off");
    }
    boolean previous = admin.balancerSwitch(words[1].equals("on"), true);
    return new Json().put("balancer", words[1]).put("previous", previous ? "on" : "off");
  }

  // ---- cluster state

  private List<ServerName> liveServers() throws Exception {
    List<ServerName> servers = new ArrayList<>(admin.getRegionServers());
    servers.sort(Comparator.naturalOrder());
    return servers;
  }

  private TableName existing(String name) throws Exception {
    TableName table = TableName.valueOf(name);
    if (!admin.tableExists(table)) {
      throw new IllegalArgumentException("table " + table + " does not exist");
    }
    return table;
  }

  /** The table's regions as their region servers report them online (not as hbase:meta says). */
  private Map<RegionInfo, ServerName> onlineRegions(TableName table) throws Exception {
    Map<RegionInfo, ServerName> regions = new TreeMap<>(RegionInfo.COMPARATOR);
    for (ServerName server : liveServers()) {
      for (RegionInfo region : admin.getRegions(server)) {
        if (region.getTable().equals(table)) {
          regions.put(region, server);
        }
      }
    }
    return regions;
  }

  private ServerName serverOf(String encoded) throws Exception {
    for (ServerName server : liveServers()) {
      for (RegionInfo region : admin.getRegions(server)) {
        if (region.getEncodedName().equals(encoded)) {
          return server;
        }
      }
    }
    return null;
  }

  private boolean onlineOn(String encoded, ServerName server) throws Exception {
    for (RegionInfo region : admin.getRegions(server)) {
      if (region.getEncodedName().equals(encoded)) {
        return true;
      }
    }
    return false;
  }

  private static ServerName resolve(String text, Collection<ServerName> servers) {
    String wanted = text.replace(':', ',');
    for (ServerName server : servers) {
      String name = server.getServerName();
      if (name.equals(wanted) || server.getAddress().toString().replace(':', ',').equals(wanted)) {
        return server;
      }
    }
    throw new IllegalArgumentException("no live region server " + text + " (live: " + servers + ")");
  }

  private interface Check {
    boolean holds() throws Exception;
  }

  private interface Action {
    void run() throws Exception;
  }

  /**
   * Runs a split or merge, again while HBase refuses it for now: a region that came out of a split or
   * merge refers to its parents' files until its first compaction (seconds), and its hbase:meta row
   * names its parents until the catalog janitor has archived them (every 5 minutes by default);
   * until then the master answers "NOT splittable" / "not mergeable". So between attempts this runs
   * the janitor, as an operator would. The wait counts in the command's "ms".
   */
  private void untilAccepted(Action action) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
    while (true) {
      try {
        action.run();
        return;
      } catch (Exception e) {
        String text = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
        boolean forNow = text.contains("not splittable") || text.contains("not mergeable")
            || text.contains("has references") || text.contains("have references");
        if (!forNow || System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(250);
        admin.runCatalogJanitor();
      }
    }
  }

  private static void waitUntil(Check check, String what) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
    while (!check.holds()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("timed out after " + WAIT_MS / 1000 + " s waiting for " + what);
      }
      Thread.sleep(100);
    }
  }

  private static Json describe(RegionInfo region, ServerName server) {
    return new Json().put("table", region.getTable().getNameAsString()).put("region", region.getEncodedName())
        .put("start", toHex(region.getStartKey())).put("end", toHex(region.getEndKey()))
        .put("server", server.getServerName()).put("port", server.getPort());
  }

  // ---- hex and JSON

  private static String toHex(byte[] bytes) {
    StringBuilder text = new StringBuilder(bytes.length * 2);
    for (byte b : bytes) {
      text.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
    }
    return text.toString();
  }

  private static byte[] fromHex(String text) {
    if (text.length() % 2 != 0) {
      throw new IllegalArgumentException("row must be hex (an even number of digits): " + text);
    }
    byte[] bytes = new byte[text.length() / 2];
    for (int i = 0; i < bytes.length; i++) {
      int high = Character.digit(text.charAt(2 * i), 16);
      int low = Character.digit(text.charAt(2 * i + 1), 16);
      if (high < 0 || low < 0) {
        throw new IllegalArgumentException("row must be hex: " + text);
      }
      bytes[i] = (byte) ((high << 4) | low);
    }
    return bytes;
  }

  /** One flat JSON object with string, number and boolean values, in insertion order. */
  private static final class Json {
    private final StringBuilder text = new StringBuilder("{");

    Json put(String key, Object value) {
      if (text.length() > 1) {
        text.append(',');
      }
      quote(key);
      text.append(':');
      if (value instanceof Number || value instanceof Boolean) {
        text.append(value);
      } else {
        quote(String.valueOf(value));
      }
      return this;
    }

    private void quote(String value) {
      text.append('"');
      for (char c : value.toCharArray()) {
        switch (c) {
          case '"' -> text.append("\\\"");
          case '\\' -> text.append("\\\\");
          case '\n' -> text.append("\\n");
          case '\r' -> text.append("\\r");
          case '\t' -> text.append("\\t");
          default -> {
            if (c < 0x20) {
              text.append(String.format("\\u%04x", (int) c));
            } else {
              text.append(c);
            }
          }
        }
      }
      text.append('"');
    }

    @Override
    public String toString() {
      return text + "}";
    }
  }
}
