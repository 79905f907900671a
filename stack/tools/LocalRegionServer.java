package hbstack;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.regionserver.HRegionServer;

/**
 * A region server of hbstack's single-JVM HBase (`HMaster start --localRegionServers=N`) on a port of
 * its own. LocalHBaseCluster hands every region server a copy of one configuration, so with a fixed
 * hbase.regionserver.port the second one cannot bind; random ports (what HBase's own tests use) would
 * leave hbstack unable to check ports before starting or to report them. The n-th region server
 * created in this JVM therefore listens on hbase.regionserver.port + n (and its web UI, if one is
 * configured, on hbase.regionserver.info.port + n). hbstack selects this class through
 * hbase.regionserver.impl only when it runs more than one region server.
 */
public final class LocalRegionServer extends HRegionServer {
  private static final AtomicInteger CREATED = new AtomicInteger();

  public LocalRegionServer(Configuration conf) throws IOException {
    super(withOwnPorts(conf));
  }

  // LocalHBaseCluster passes each region server its own Configuration copy, so changing it here
  // touches no other server.
  private static Configuration withOwnPorts(Configuration conf) {
    int index = CREATED.getAndIncrement();
    int port = conf.getInt(HConstants.REGIONSERVER_PORT, HConstants.DEFAULT_REGIONSERVER_PORT);
    if (port > 0) {
      conf.setInt(HConstants.REGIONSERVER_PORT, port + index);
    }
    int info = conf.getInt(HConstants.REGIONSERVER_INFO_PORT, -1);
    if (info > 0) {
      conf.setInt(HConstants.REGIONSERVER_INFO_PORT, info + index);
    }
    return conf;
  }
}
