/**
 * The snapshot publisher: rebuilds and checks each READY epoch, signs it and publishes it to
 * {@code ring.snapshots}, chained to the previous one, together with a PUBLISHED epoch record in one Kafka
 * transaction (docs/publisher.md). {@link io.ringshift.publisher.SnapshotPublisher} runs it, configured by
 * {@link io.ringshift.publisher.PublisherConfig}. Implementation details live in
 * {@code io.ringshift.publisher.internal}.
 */
package io.ringshift.publisher;
