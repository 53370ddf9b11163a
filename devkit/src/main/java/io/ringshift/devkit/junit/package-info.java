/**
 * JUnit 5 support for integration tests against a real broker:
 * {@link io.ringshift.devkit.junit.EmbeddedKafkaExtension}, one broker per test class with a unique
 * application id and topic prefix per test and a consume-with-timeout helper. JUnit is a {@code provided}
 * dependency of the devkit: a module that uses this package depends on {@code ringshift-devkit} in test scope,
 * where JUnit already is.
 */
package io.ringshift.devkit.junit;
