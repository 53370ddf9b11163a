package io.ringshift.cli.internal.data;

import io.ringshift.cli.BadInputException;
import io.ringshift.cli.KafkaUnavailableException;
import io.ringshift.cli.internal.TrustedKeyFiles;
import io.ringshift.cli.internal.control.KafkaOptions;
import io.ringshift.client.Placement;
import io.ringshift.client.RingClient;
import io.ringshift.client.RingClientConfig;
import io.ringshift.protocol.KafkaProperties;
import io.ringshift.protocol.Topics;
import io.ringshift.storage.RemoteStore;
import io.ringshift.storage.RoutedWriter;
import io.ringshift.storage.Routing;
import io.ringshift.storage.Store;
import io.ringshift.storage.StoreException;
import io.ringshift.worker.NodeDirectory;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The client path of the data commands, as an application has it: a {@link RingClient} that follows the cluster's
 * published, verified ring, a {@link RoutedWriter} over it writing every replica in parallel, and one connection
 * per storage node's client port.
 */
final class DataPlane implements AutoCloseable {
  private final RingClient client;
  private final NodeDirectory directory;
  private final Duration nodeTimeout;
  private final Map<String, Store> stores = new ConcurrentHashMap<>();
  private final RoutedWriter writer;

  private DataPlane(RingClient client, NodeDirectory directory, Duration nodeTimeout) {
    this.client = client;
    this.directory = directory;
    this.nodeTimeout = nodeTimeout;
    Routing routing = new Routing() {
      @Override
      public Route route(byte[] key) {
        if (client.current().isEmpty()) {
          throw new StoreException.Unavailable("no published ring yet", null);
        }
        // The placement, not the ring alone: in a transition stage it names the replicas of both rings.
        Placement p = client.placement(key);
        return new Route(p.epoch(), p.ownerIds());
      }

      @Override
      public boolean awaitEpoch(long epoch, Duration timeout) {
        try {
          return client.awaitEpoch(epoch, timeout);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
    };
    this.writer = RoutedWriter.create(routing, this::store);
  }

  /**
   * Validates the options, starts the ring client and waits for the first published ring.
   *
   * @throws BadInputException for a bad option, or when no ring of the cluster is published within the timeout
   */
  static DataPlane open(KafkaOptions kafka, DataOptions data) {
    String bootstrap = kafka.bootstrap();
    KafkaProperties properties = kafka.kafkaProperties();
    Topics topics = kafka.topics();
    NodeDirectory directory = data.directory();
    Duration ringTimeout = data.ringTimeout();
    Duration nodeTimeout = data.nodeTimeout();
    RingClientConfig.Builder config = RingClientConfig.builder()
        .bootstrapServers(bootstrap)
        .clusterId(data.cluster)
        .topic(topics.snapshots().name())
        .epochsTopic(topics.epochs().name())
        .participantsTopic(topics.participants().name())
        .trustedKeys(TrustedKeyFiles.read(data.trustedKeys));
    properties.values().forEach(config::consumerProperty);
    RingClient client;
    try {
      client = new RingClient(config.build()).start();
    } catch (IllegalArgumentException e) {
      throw new BadInputException(e.getMessage(), e);
    }
    try {
      if (!client.awaitEpoch(0, ringTimeout)) {
        client.close();
        throw new KafkaUnavailableException("no published ring of cluster " + data.cluster + " on "
            + topics.snapshots().name() + " at " + bootstrap + " within " + ringTimeout + " (is the publisher "
            + "running, and is --trusted-key its public key?)");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      client.close();
      throw new KafkaUnavailableException("interrupted while waiting for the published ring", e);
    }
    return new DataPlane(client, directory, nodeTimeout);
  }

  RingClient client() {
    return client;
  }

  RoutedWriter writer() {
    return writer;
  }

  /** The connection to node {@code id}'s client port. @throws StoreException.BadRequest for an unknown node */
  Store store(String id) {
    return stores.computeIfAbsent(id, n -> {
      NodeDirectory.Address address = directory.nodes().get(n);
      if (address == null) {
        throw new StoreException.BadRequest("node " + n + " of the ring is not in --nodes/--node (its client port is "
            + "unknown); add it");
      }
      return RemoteStore.connect(address.host() + ":" + address.port(), nodeTimeout);
    });
  }

  @Override
  public void close() {
    stores.values().forEach(Store::close);
    client.close();
  }
}
