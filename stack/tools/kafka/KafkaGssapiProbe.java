package hbstack;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A Kafka peer over the broker's GSSAPI listener (hbstack selftest with HBSTACK_KERBEROS=1): logs in
 * from a keytab (the JAAS entry in sasl.jaas.config, Krb5LoginModule), produces one record to
 * partition 0 of a topic and reads it back from its offset. Compiled and run from source against the
 * Kafka classpath (java -cp KAFKA_CP KafkaGssapiProbe.java): stack/tools/*.java build against
 * HBase's, which has no kafka-clients. The JVM needs -Djava.security.krb5.conf.
 *
 * <p>Usage: KafkaGssapiProbe BOOTSTRAP KEYTAB PRINCIPAL [TOPIC]. One line on stdout when the record
 * came back; exit 1 with the exception on stderr otherwise.
 */
public final class KafkaGssapiProbe {
  private KafkaGssapiProbe() {}

  private static Properties common(String bootstrap, String keytab, String principal) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("security.protocol", "SASL_PLAINTEXT");
    p.put("sasl.mechanism", "GSSAPI");
    p.put("sasl.kerberos.service.name", "kafka");
    p.put(
        "sasl.jaas.config",
        "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true"
            + " useTicketCache=false keyTab=\"" + keytab + "\" principal=\"" + principal + "\";");
    p.put("request.timeout.ms", "20000");
    p.put("default.api.timeout.ms", "30000");
    return p;
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: KafkaGssapiProbe BOOTSTRAP KEYTAB PRINCIPAL [TOPIC]");
      System.exit(2);
    }
    String bootstrap = args[0];
    String keytab = args[1];
    String principal = args[2];
    String tag = UUID.randomUUID().toString().substring(0, 8);
    String topic = args.length > 3 ? args[3] : "hbstack-gssapi-" + tag;
    byte[] value = ("over GSSAPI " + tag).getBytes(StandardCharsets.UTF_8);
    try {
      Properties pp = common(bootstrap, keytab, principal);
      pp.put("key.serializer", ByteArraySerializer.class.getName());
      pp.put("value.serializer", ByteArraySerializer.class.getName());
      pp.put("max.block.ms", "30000");
      RecordMetadata md;
      try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp)) {
        md = producer.send(new ProducerRecord<>(topic, 0, null, value)).get();
      }
      Properties cp = common(bootstrap, keytab, principal);
      cp.put("key.deserializer", ByteArrayDeserializer.class.getName());
      cp.put("value.deserializer", ByteArrayDeserializer.class.getName());
      cp.put("enable.auto.commit", "false");
      TopicPartition tp = new TopicPartition(topic, 0);
      try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp)) {
        consumer.assign(List.of(tp));
        consumer.seek(tp, md.offset());
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
          for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
            if (r.offset() == md.offset()) {
              if (!java.util.Arrays.equals(r.value(), value)) {
                throw new IllegalStateException("read back a different value at offset " + r.offset());
              }
              System.out.printf(
                  "kafka gssapi: %s produced and consumed %s-0@%d as %s%n",
                  bootstrap, topic, md.offset(), principal);
              return;
            }
          }
        }
        throw new IllegalStateException("record " + topic + "-0@" + md.offset() + " not read back within 30s");
      }
    } catch (Exception e) {
      StringBuilder why = new StringBuilder(e.toString());
      for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
        why.append(" <- ").append(c);
      }
      System.err.println("kafka gssapi: " + bootstrap + " as " + principal + ": " + why);
      System.exit(1);
    }
  }
}
