// Table chores for bench/compare.sh over the HBase Java client: count a table's rows (a key-only
// scan), digest every cell of it, flush it, and drop it.
// `java -cp CLASSPATH TableTool ZK_HOST:PORT count|cells|flush|drop TABLE`
//
// `cells` prints "ROWS CELLS SHA256 VALUE_BYTES": the digest covers, in scan order, every cell's row,
// family, qualifier, timestamp and value, each length-prefixed, so two tables digest alike only if
// they hold the same cells. It reads the stored cells, not what a client meant to send. VALUE_BYTES
// is the sum of the cells' value lengths.
//
// `flush` flushes every region's memstore to store files and returns once the region servers report
// no memstore data left for the table; it prints the milliseconds that took.
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.RegionMetrics;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.Size;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import java.nio.ByteBuffer;
import java.security.MessageDigest;

public final class TableTool {
  public static void main(String[] argv) throws Exception {
    if (argv.length != 3) throw new IllegalArgumentException("usage: TableTool ZK_HOST:PORT count|cells|flush|drop TABLE");
    Configuration conf = HBaseConfiguration.create();
    String[] zk = argv[0].split(":");
    conf.set("hbase.zookeeper.quorum", zk[0]);
    conf.set("hbase.zookeeper.property.clientPort", zk[1]);
    TableName name = TableName.valueOf(argv[2]);
    try (Connection connection = ConnectionFactory.createConnection(conf)) {
      switch (argv[1]) {
        case "count": {
          long rows = 0;
          Scan scan = new Scan().setFilter(new FirstKeyOnlyFilter()).setCaching(10000).setCacheBlocks(false);
          try (Table table = connection.getTable(name); ResultScanner scanner = table.getScanner(scan)) {
            for (Result ignored : scanner) ++rows;
          }
          System.out.println(rows);
          break;
        }
        case "cells": {
          long rows = 0;
          long cells = 0;
          long valueBytes = 0;
          MessageDigest digest = MessageDigest.getInstance("SHA-256");
          Scan scan = new Scan().setCaching(2000).setCacheBlocks(false).readVersions(Integer.MAX_VALUE);
          try (Table table = connection.getTable(name); ResultScanner scanner = table.getScanner(scan)) {
            for (Result result : scanner) {
              ++rows;
              for (Cell cell : result.rawCells()) {
                ++cells;
                valueBytes += cell.getValueLength();
                update(digest, CellUtil.cloneRow(cell));
                update(digest, CellUtil.cloneFamily(cell));
                update(digest, CellUtil.cloneQualifier(cell));
                digest.update(ByteBuffer.allocate(8).putLong(cell.getTimestamp()).array());
                update(digest, CellUtil.cloneValue(cell));
              }
            }
          }
          StringBuilder hex = new StringBuilder();
          for (byte b : digest.digest()) hex.append(String.format("%02x", b));
          System.out.println(rows + " " + cells + " " + hex + " " + valueBytes);
          break;
        }
        case "flush": {
          long started = System.nanoTime();
          try (Admin admin = connection.getAdmin()) {
            admin.flush(name);
            // Admin.flush waits for the flush procedure; the region servers' own account of the
            // table's memstores says the data is in store files.
            long deadline = started + 300_000_000_000L;
            while (memstoreBytes(admin, name) > 0) {
              if (System.nanoTime() > deadline) throw new IllegalStateException(name + ": memstore not empty 300 s after flush");
              Thread.sleep(100);
            }
          }
          System.out.println((System.nanoTime() - started) / 1_000_000);
          break;
        }
        case "drop": {
          try (Admin admin = connection.getAdmin()) {
            if (admin.tableExists(name)) {
              if (admin.isTableEnabled(name)) admin.disableTable(name);
              admin.deleteTable(name);
            }
          }
          break;
        }
        default:
          throw new IllegalArgumentException("unknown command " + argv[1]);
      }
    }
  }

  private static double memstoreBytes(Admin admin, TableName name) throws Exception {
    double bytes = 0;
    for (ServerName server : admin.getRegionServers()) {
      for (RegionMetrics region : admin.getRegionMetrics(server, name)) {
        bytes += region.getMemStoreSize().get(Size.Unit.BYTE);
      }
    }
    return bytes;
  }

  private static void update(MessageDigest digest, byte[] bytes) {
    digest.update(ByteBuffer.allocate(4).putInt(bytes.length).array());
    digest.update(bytes);
  }
}
