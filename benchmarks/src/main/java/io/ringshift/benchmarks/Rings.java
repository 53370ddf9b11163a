package io.ringshift.benchmarks;

import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingSnapshot;

/** The reference rings the benchmarks use: nodes {@code node-000...} spread round-robin over 3 zones. */
final class Rings {
  private Rings() {}

  static String nodeId(int n) {
    return String.format("node-%03d", n);
  }

  static RingBuilder referenceBuilder(int nodes, int vnodes) {
    RingBuilder builder = RingSnapshot.builder().clusterId("bench").vnodes(vnodes).replicas(3);
    for (int n = 0; n < nodes; n++) {
      builder.addMember(nodeId(n), "az-" + (n % 3 + 1));
    }
    return builder;
  }

  static RingSnapshot reference(int nodes, int vnodes) {
    return referenceBuilder(nodes, vnodes).build();
  }
}
