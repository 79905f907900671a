package hbstack;

import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * hbstack's cell reader: every cell of a table as a Java application reads it, through HBase's Java
 * client and {@code org.apache.hadoop.hbase.util.Bytes}: the independent reader that proves what
 * hbingest writes is what {@code Bytes.toLong(cell)} (toInt, toDouble, toBigDecimal, ...) returns.
 *
 * <pre>
 *   CellReader TABLE [--all-versions] [FAMILY:QUALIFIER=TYPE | FAMILY:*=TYPE ...]
 *   TYPE: long int short double float boolean bigdecimal string text bytes
 * </pre>
 *
 * One JSON line per cell, in scan order (row, family, qualifier, newest version first):
 * {"row":HEX,"family":F,"qualifier":Q,"timestamp":MS,"value_hex":HEX} and, for a cell the type map
 * names (an exact column first, then its family's {@code *}), "type" and "value" = the Bytes.toX
 * of its value: long/int/short a JSON number; double/float Double.toString/Float.toString as a JSON
 * number, NaN/Infinity/-Infinity as strings; boolean true/false; bigdecimal BigDecimal.toString()
 * as a string; string/text Bytes.toString; bytes base64. A cell Bytes.toX refuses (a wrong length)
 * gets "error" instead of "value". Family and qualifier are Bytes.toString of theirs. Then one
 * status line {"ok":true,"rows":N,"cells":M}, or {"ok":false,"error":...} and exit status 1.
 * A usage error is such a status line too, with exit status 2. The cluster is hbase-site.xml's, first on the classpath.
 */
public final class CellReader {
  private static final String USAGE =
      "usage: CellReader TABLE [--all-versions] [FAMILY:QUALIFIER=TYPE | FAMILY:*=TYPE ...]"
          + " (TYPE: long int short double float boolean bigdecimal string text bytes)";

  public static void main(String[] args) {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    if (args.length == 0 || args[0].startsWith("-")) {
      usage(out, USAGE);
    }
    boolean allVersions = false;
    Map<String, String> types = new HashMap<>();
    for (int i = 1; i < args.length; i++) {
      if (args[i].equals("--all-versions")) {
        allVersions = true;
        continue;
      }
      int equals = args[i].lastIndexOf('=');
      String column = equals < 0 ? "" : args[i].substring(0, equals);
      String type = equals < 0 ? "" : args[i].substring(equals + 1);
      if (column.indexOf(':') <= 0 || !isType(type)) {
        usage(out, "'" + args[i] + "' is not FAMILY:QUALIFIER=TYPE; " + USAGE);
      }
      types.put(column, type);
    }
    Configuration conf = HBaseConfiguration.create();
    long rows = 0;
    long cells = 0;
    try (Connection connection = ConnectionFactory.createConnection(conf);
        Table table = connection.getTable(TableName.valueOf(args[0]))) {
      Scan scan = new Scan().setCaching(1000).setCacheBlocks(false);
      if (allVersions) {
        scan.readAllVersions();
      }
      try (ResultScanner scanner = table.getScanner(scan)) {
        for (Result result : scanner) {
          ++rows;
          for (Cell cell : result.rawCells()) {
            ++cells;
            out.println(describe(cell, types));
          }
        }
      }
    } catch (Exception e) {
      out.println(new Json().put("ok", false).put("error", String.valueOf(e)));
      System.exit(1);
    }
    out.println(new Json().put("ok", true).put("rows", rows).put("cells", cells));
  }

  /** Usage errors on stdout too, as the status line: hbstack sends stderr to a log. */
  private static void usage(PrintStream out, String error) {
    out.println(new Json().put("ok", false).put("error", error));
    System.exit(2);
  }

  private static boolean isType(String type) {
    return switch (type) {
      case "long", "int", "short", "double", "float", "boolean", "bigdecimal", "string", "text", "bytes" -> true;
      default -> false;
    };
  }

  private static Json describe(Cell cell, Map<String, String> types) {
    String family = Bytes.toString(CellUtil.cloneFamily(cell));
    String qualifier = Bytes.toString(CellUtil.cloneQualifier(cell));
    byte[] value = CellUtil.cloneValue(cell);
    Json line = new Json().put("row", Bytes.toHex(CellUtil.cloneRow(cell))).put("family", family)
        .put("qualifier", qualifier).put("timestamp", cell.getTimestamp()).put("value_hex", Bytes.toHex(value));
    String type = types.getOrDefault(family + ":" + qualifier, types.get(family + ":*"));
    if (type == null) {
      return line;
    }
    line.put("type", type);
    try {
      switch (type) {
        case "long" -> line.put("value", Bytes.toLong(value));
        case "int" -> line.put("value", Bytes.toInt(value));
        case "short" -> line.put("value", Bytes.toShort(value));
        case "double" -> line.putReal("value", Bytes.toDouble(value));
        case "float" -> line.putReal("value", Bytes.toFloat(value));
        case "boolean" -> line.put("value", Bytes.toBoolean(value));
        case "bigdecimal" -> {
          BigDecimal decimal = Bytes.toBigDecimal(value);
          if (decimal == null) {
            throw new IllegalArgumentException("Bytes.toBigDecimal: null (" + value.length + " bytes)");
          }
          line.put("value", decimal.toString());
        }
        case "bytes" -> line.put("value", Base64.getEncoder().encodeToString(value));
        default -> line.put("value", Bytes.toString(value)); // string, text
      }
    } catch (RuntimeException e) {
      line.put("error", String.valueOf(e));
    }
    return line;
  }

  /** One flat JSON object, in insertion order. */
  private static final class Json {
    private final StringBuilder text = new StringBuilder("{");

    Json put(String key, Object value) {
      key(key);
      if (value instanceof Long || value instanceof Integer || value instanceof Short
          || value instanceof Boolean) {
        text.append(value);
      } else {
        quote(String.valueOf(value));
      }
      return this;
    }

    /** Java's shortest-that-reads-back text (a valid JSON number); JSON has no NaN or infinities. */
    Json putReal(String key, double value) {
      key(key);
      if (Double.isNaN(value) || Double.isInfinite(value)) {
        quote(Double.toString(value));
      } else {
        text.append(Double.toString(value));
      }
      return this;
    }

    Json putReal(String key, float value) {
      key(key);
      if (Float.isNaN(value) || Float.isInfinite(value)) {
        quote(Float.toString(value));
      } else {
        text.append(Float.toString(value));
      }
      return this;
    }

    private void key(String key) {
      if (text.length() > 1) {
        text.append(',');
      }
      quote(key);
      text.append(':');
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
            if (c < 0x20 || Character.isSurrogate(c)) {
              // Surrogates escaped: a pair still reads as its character, and a lone one (which
              // Bytes.toString never gives) cannot make the output invalid UTF-8.
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
