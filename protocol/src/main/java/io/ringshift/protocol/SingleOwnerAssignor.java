package io.ringshift.protocol;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * Gives every partition of the subscribed topics to one member of the group, so that holding them is a lease: the
 * member that holds them keeps them as long as it stays in the group, and when it leaves (or misses its session
 * timeout) they go to one other member. Members hold nothing else.
 *
 * <p>Who holds them: the member that owned partitions before this rebalance (the smallest member id if, after a
 * split, several did), else the member with the smallest id. Cooperative: a partition that another member still owns
 * is left out of this round; that member gives it up and rejoins, and the next round hands it over.
 */
public final class SingleOwnerAssignor implements ConsumerPartitionAssignor {
  public static final String NAME = "ringshift-single-owner";

  /** Kafka creates the assignor by its class name. */
  public SingleOwnerAssignor() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public List<RebalanceProtocol> supportedProtocols() {
    return List.of(RebalanceProtocol.COOPERATIVE);
  }

  @Override
  public GroupAssignment assign(Cluster metadata, GroupSubscription groupSubscription) {
    Map<String, Subscription> members = groupSubscription.groupSubscription();
    Set<String> topics = new TreeSet<>();
    members.values().forEach(s -> topics.addAll(s.topics()));
    List<TopicPartition> partitions = new ArrayList<>();
    for (String topic : topics) {
      for (PartitionInfo info : metadata.partitionsForTopic(topic)) {
        partitions.add(new TopicPartition(topic, info.partition()));
      }
    }
    Map<String, List<TopicPartition>> owned = new HashMap<>();
    members.forEach((member, s) -> owned.put(member, s.ownedPartitions()));
    Map<String, Assignment> assignment = new HashMap<>();
    for (Map.Entry<String, List<TopicPartition>> e : assign(partitions, owned).entrySet()) {
      assignment.put(e.getKey(), new Assignment(e.getValue()));
    }
    return new GroupAssignment(assignment);
  }

  /** The pure rule: member id to the partitions it gets; every member is a key. */
  static Map<String, List<TopicPartition>> assign(List<TopicPartition> partitions,
      Map<String, List<TopicPartition>> ownedByMember) {
    Map<String, List<TopicPartition>> result = new HashMap<>();
    ownedByMember.keySet().forEach(member -> result.put(member, new ArrayList<>()));
    Optional<String> owner = ownedByMember.entrySet().stream()
        .filter(e -> !e.getValue().isEmpty()).map(Map.Entry::getKey).min(Comparator.naturalOrder())
        .or(() -> ownedByMember.keySet().stream().min(Comparator.naturalOrder()));
    if (owner.isEmpty()) {
      return result;
    }
    Set<TopicPartition> ownedByOthers = new HashSet<>();
    ownedByMember.forEach((member, owned) -> {
      if (!member.equals(owner.get())) {
        ownedByOthers.addAll(owned);
      }
    });
    for (TopicPartition partition : partitions) {
      if (!ownedByOthers.contains(partition)) {
        result.get(owner.get()).add(partition);
      }
    }
    return result;
  }
}
