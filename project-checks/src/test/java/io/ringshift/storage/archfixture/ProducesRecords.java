package io.ringshift.storage.archfixture;

import org.apache.kafka.clients.producer.Producer;

/**
 * A storage class that holds a Kafka producer: plain Kafka, no Streams, in the storage module.
 *
 * <p>A deliberate violation for {@code io.ringshift.checks.ArchitectureRulesTest}, which imports it on its own; the
 * production rules never see it (test classes are not imported).
 */
public final class ProducesRecords {
  private ProducesRecords() {}

  public static void flush(Producer<byte[], byte[]> producer) {
    producer.flush();
  }
}
