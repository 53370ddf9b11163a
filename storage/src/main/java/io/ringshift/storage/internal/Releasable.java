package io.ringshift.storage.internal;

/** Native resources a store hands out (a scan's snapshot, a feed's log iterator), released before the database. */
interface Releasable {
  /** Frees the native resources; idempotent. Called by the owner or, at the latest, by the store's close. */
  void release();
}
