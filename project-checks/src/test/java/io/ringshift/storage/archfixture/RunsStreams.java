package io.ringshift.storage.archfixture;

import org.apache.kafka.streams.KafkaStreams;

/**
 * A storage class that holds a Kafka Streams instance: Streams (and Kafka) in the storage module.
 *
 * <p>A deliberate violation for {@code io.ringshift.checks.ArchitectureRulesTest}, which imports it on its own; the
 * production rules never see it (test classes are not imported).
 */
public final class RunsStreams {
  private RunsStreams() {}

  public static void stop(KafkaStreams streams) {
    streams.close();
  }
}
