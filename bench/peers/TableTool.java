// Table chores for bench/compare.sh over the HBase Java client: count a table's rows (a key-only
// scan) and drop a table. `java -cp CLASSPATH TableTool ZK_HOST:PORT count|drop TABLE`
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter;

public final class TableTool {
  public static void main(String[] argv) throws Exception {
    if (argv.length != 3) throw new IllegalArgumentException("usage: TableTool ZK_HOST:PORT count|drop TABLE");
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
}
