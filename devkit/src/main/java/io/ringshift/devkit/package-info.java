/**
 * A real single-node Kafka broker inside the JVM, for {@code ringshift dev} and integration tests:
 * {@link io.ringshift.devkit.EmbeddedKafka} and its builder; every failure is an
 * {@link io.ringshift.devkit.EmbeddedKafkaException}. {@code io.ringshift.devkit.junit} holds the JUnit 5
 * extension for {@code *IT} classes; {@code io.ringshift.devkit.internal} is not API.
 */
package io.ringshift.devkit;
