/**
 * The client's implementation, not API: the Kafka-free verification of snapshots ({@link
 * io.ringshift.client.internal.SnapshotGate}), the per-range filling index, the cold-start file, the Kafka tail
 * and the metrics. Other modules use {@link io.ringshift.client.RingClient} instead.
 */
package io.ringshift.client.internal;
