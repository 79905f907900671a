// The Java peer of bench/compare.sh: what a team writes by hand with the stock clients instead of
// running hbingest. A KafkaConsumer (max.poll.records 1000, no auto commit) and an HBase
// BufferedMutator (the client's default 2 MB write buffer, talking to ZooKeeper and the region
// servers directly); after each poll batch it flushes the mutator, then commits synchronously.
// It builds the rows of hbingest's default `events` key spec itself, as such a program would:
//   salt (XXH64 of partition and offset, mod buckets, zero-padded) | event_id padded to 16 with 0x01
//   | ts as yyyyMMddHHmmssSSS (UTC) | partition (4 digits) | offset (19 digits)
// one cell per top-level JSON field in family d, cell timestamp = ts, TTL on every put.
// compare.sh checks the keys it writes to --sample-file against `hbingest key build`.
// With the system property bench.proxy.ports (compare.sh --link-latency) its HBase connections go
// through the benchmark's proxies: ProxiedSocketFactory says how.
//
//   java -cp CLASSPATH KafkaToHBase --brokers B --topic T --group G --zookeeper H:P --table T
//        --events N --buckets 100 --ttl-ms 86400000 [--sample-file F --sample-every K]
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import net.jpountz.xxhash.XXHash64;
import net.jpountz.xxhash.XXHashFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Put;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class KafkaToHBase {
  private static final byte[] FAMILY = "d".getBytes(StandardCharsets.UTF_8);
  private static final int EVENT_WIDTH = 16;
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyyMMddHHmmssSSS").withZone(ZoneOffset.UTC);
  private static final XXHash64 XXH64 = XXHashFactory.fastestInstance().hash64();

  private final int buckets;
  private final String saltFormat;

  KafkaToHBase(int buckets) {
    this.buckets = buckets;
    this.saltFormat = "%0" + String.valueOf(buckets - 1).length() + "d";
  }

  byte[] rowKey(String eventId, long tsMs, int partition, long offset) {
    ByteBuffer saltInput = ByteBuffer.allocate(13).putInt(partition).put((byte) 0).putLong(offset);
    long salt = Long.remainderUnsigned(XXH64.hash(saltInput.array(), 0, 13, 0L), buckets);
    byte[] event = eventId.getBytes(StandardCharsets.UTF_8);
    if (event.length > EVENT_WIDTH) throw new IllegalArgumentException("event_id longer than 16 bytes: " + eventId);
    byte[] paddedEvent = Arrays.copyOf(event, EVENT_WIDTH);
    Arrays.fill(paddedEvent, event.length, EVENT_WIDTH, (byte) 1);
    String tail = TIME.format(Instant.ofEpochMilli(tsMs)) + String.format("%04d%019d", partition, offset);
    ByteBuffer key = ByteBuffer.allocate(64);
    key.put(String.format(saltFormat, salt).getBytes(StandardCharsets.US_ASCII));
    key.put(paddedEvent);
    key.put(tail.getBytes(StandardCharsets.US_ASCII));
    return Arrays.copyOf(key.array(), key.position());
  }

  // A JSON value as cell text: strings unquoted, numbers and booleans as written, nested values as
  // compact JSON; null fields are not written.
  static byte[] cellValue(JsonElement value) {
    if (value.isJsonPrimitive()) return value.getAsString().getBytes(StandardCharsets.UTF_8);
    return value.toString().getBytes(StandardCharsets.UTF_8);
  }

  Put toPut(ConsumerRecord<byte[], byte[]> record, long ttlMs) {
    JsonObject event = JsonParser.parseString(new String(record.value(), StandardCharsets.UTF_8)).getAsJsonObject();
    long ts = event.get("ts").getAsLong();
    Put put = new Put(rowKey(event.get("event_id").getAsString(), ts, record.partition(), record.offset()), ts);
    for (Map.Entry<String, JsonElement> field : event.entrySet()) {
      if (field.getValue().isJsonNull()) continue;
      put.addColumn(FAMILY, field.getKey().getBytes(StandardCharsets.UTF_8), cellValue(field.getValue()));
    }
    put.setTTL(ttlMs);
    return put;
  }

  private static String hex(byte[] bytes) {
    StringBuilder s = new StringBuilder();
    for (byte b : bytes) s.append(String.format("%02x", b));
    return s.toString();
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = new HashMap<>();
    for (int i = 0; i + 1 < argv.length; i += 2) args.put(argv[i], argv[i + 1]);
    for (String required : List.of("--brokers", "--topic", "--group", "--zookeeper", "--table", "--events", "--ttl-ms")) {
      if (!args.containsKey(required)) throw new IllegalArgumentException("missing " + required);
    }
    long events = Long.parseLong(args.get("--events"));
    long ttlMs = Long.parseLong(args.get("--ttl-ms"));
    long sampleEvery = Long.parseLong(args.getOrDefault("--sample-every", "0"));
    KafkaToHBase peer = new KafkaToHBase(Integer.parseInt(args.getOrDefault("--buckets", "100")));

    Properties consumerProps = new Properties();
    consumerProps.put("bootstrap.servers", args.get("--brokers"));
    consumerProps.put("group.id", args.get("--group"));
    consumerProps.put("enable.auto.commit", "false");
    consumerProps.put("auto.offset.reset", "earliest");
    consumerProps.put("max.poll.records", "1000");
    consumerProps.put("key.deserializer", ByteArrayDeserializer.class.getName());
    consumerProps.put("value.deserializer", ByteArrayDeserializer.class.getName());

    Configuration hbase = HBaseConfiguration.create();
    String[] zk = args.get("--zookeeper").split(":");
    hbase.set("hbase.zookeeper.quorum", zk[0]);
    hbase.set("hbase.zookeeper.property.clientPort", zk[1]);
    if (!System.getProperty("bench.proxy.ports", "").isEmpty()) {
      // The blocking client makes its sockets with Hadoop's socket factory, which can redirect them;
      // the default Netty client connects on its own.
      hbase.set("hbase.rpc.client.impl", "org.apache.hadoop.hbase.ipc.BlockingRpcClient");
      hbase.set("hadoop.rpc.socket.factory.class.default", ProxiedSocketFactory.class.getName());
    }

    long written = 0;
    long started = System.nanoTime();
    try (PrintWriter sample = args.containsKey("--sample-file")
             ? new PrintWriter(Files.newBufferedWriter(Paths.get(args.get("--sample-file")))) : null;
         KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps);
         Connection connection = ConnectionFactory.createConnection(hbase);
         BufferedMutator mutator = connection.getBufferedMutator(TableName.valueOf(args.get("--table")))) {
      consumer.subscribe(List.of(args.get("--topic")));
      while (written < events) {
        ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(500));
        if (records.isEmpty()) continue;
        for (ConsumerRecord<byte[], byte[]> record : records) {
          Put put = peer.toPut(record, ttlMs);
          mutator.mutate(put);
          if (sample != null && sampleEvery > 0 && written % sampleEvery == 0) {
            sample.println(record.partition() + "\t" + record.offset() + "\t" + hex(put.getRow()) + "\t"
                + new String(record.value(), StandardCharsets.UTF_8));
          }
          ++written;
        }
        mutator.flush();
        consumer.commitSync();
      }
    }
    System.out.printf("{\"events\": %d, \"seconds\": %.3f}%n", written, (System.nanoTime() - started) / 1e9);
  }
}
