/**
 * The snapshot publisher: rebuilds and checks each READY epoch, signs it and publishes it to
 * {@code ring.snapshots}, chained to the previous one. Implementation details live in
 * {@code io.ringshift.publisher.internal}.
 */
package io.ringshift.publisher;
