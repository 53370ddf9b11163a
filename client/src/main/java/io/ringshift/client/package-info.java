/**
 * The ring client: tails {@code ring.snapshots}, accepts only verified, signed, chained snapshots, and answers
 * placement lookups locally. Implementation details live in {@code io.ringshift.client.internal}.
 */
package io.ringshift.client;
