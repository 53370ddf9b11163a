package io.ringshift.client.archfixture;

import org.apache.kafka.streams.KafkaStreams;

/**
 * A client class that holds a Kafka Streams instance: Streams in the client library.
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
