package io.ringshift.localplane;

import io.ringshift.client.RingClient;
import io.ringshift.client.RingClientConfig;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.storage.RingView;
import java.util.Locale;

/**
 * The published ring as a storage node sees it ({@code ringshift node --bootstrap}, and the nodes of
 * {@code ringshift dev}): a {@link RingClient} following {@code ring.snapshots}, whose
 * every swap replaces the ring the node's ownership check reads (one volatile field, so a write is checked
 * against one whole snapshot and the check allocates nothing), or no ring at all when the node runs without
 * Kafka.
 */
public final class PublishedRingView implements RingView, AutoCloseable {
  private final RingClient client;
  /** The rings of the snapshot routed by (no previous ring for a FINAL one), or null: one instance per snapshot. */
  private volatile RoutedRings held;

  private PublishedRingView(RingClient client) {
    this.client = client;
  }

  /** No ring: ownership is never checked, fences still are. */
  public static PublishedRingView none() {
    return new PublishedRingView(null);
  }

  /**
   * Follows the ring of the configured cluster. The persist file, if it holds a verified snapshot, is routed by
   * at once, before Kafka answers; until the first snapshot the node checks fences only.
   */
  public static PublishedRingView follow(RingClientConfig config) {
    RingClient client = new RingClient(config);
    PublishedRingView view = new PublishedRingView(client);
    client.addSwapListener(swap -> view.swap(swap.snapshot()));
    client.start();
    return view;
  }

  /** Routes by {@code snapshot}: its ring, and in a transition stage the ring it starts from. */
  void swap(PublishedSnapshot snapshot) {
    held = new RoutedRings(snapshot.ring(), snapshot.previous(), !snapshot.stage().readsNew());
  }

  @Override
  public RingSnapshot current() {
    RoutedRings now = held;
    return now == null ? null : now.ring();
  }

  @Override
  public RoutedRings rings() {
    RoutedRings now = held;
    return now == null || now.previous() == null ? null : now;
  }

  /**
   * Has the node's reports carry when it last took a write without a version ({@code lastMillis}, -1: none), so that
   * the publisher keeps the fence while clients of before versions write. No-op without a ring followed.
   */
  public void reportUnversionedWrites(java.util.function.LongSupplier lastMillis) {
    if (client != null) {
      client.unversionedWrites(lastMillis);
    }
  }

  /** One phrase for the start-up line. */
  public String describe() {
    if (client == null) {
      return "no ring followed (no --bootstrap): writes are checked against fences only";
    }
    RingSnapshot now = current();
    return now == null
        ? String.format(Locale.ROOT, "following the ring of cluster %s (no snapshot yet: ownership is checked "
            + "from the first one)", client.clusterId())
        : String.format(Locale.ROOT, "following the ring of cluster %s at epoch %d", client.clusterId(),
            now.epoch());
  }

  @Override
  public void close() {
    if (client != null) {
      client.close();
    }
  }
}
