package io.ringshift.protocol;

import io.ringshift.ring.Member;
import io.ringshift.ring.MemberState;
import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingSnapshot;
import java.util.Locale;

/** Small rings for tests. */
final class Rings {
  private Rings() {}

  /** {@code nodes} active members node-0001.. spread over {@code zones} zones az-1.., weight 1. */
  static RingBuilder builder(int nodes, int zones) {
    RingBuilder builder = RingSnapshot.builder();
    for (int i = 1; i <= nodes; i++) {
      builder.addMember(String.format(Locale.ROOT, "node-%04d", i), "az-" + (1 + (i - 1) % zones));
    }
    return builder;
  }

  /** A varied ring: weights, a FILLING member, non-default cluster, epoch, vnodes and replicas. */
  static RingSnapshot varied() {
    return builder(7, 3)
        .clusterId("eu-west/cache")
        .epoch(42)
        .vnodes(64)
        .replicas(3)
        .addMember(new Member("node-heavy", "az-2", 2.5, MemberState.ACTIVE))
        .addMember(new Member("node-filling", "az-3", 0.75, MemberState.FILLING))
        .addMember(new Member("nœud-ünïcode", "az-1", 1.0, MemberState.ACTIVE))
        .build();
  }
}
