package io.ringshift.storage;

import static io.ringshift.storage.TestKeys.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client's routed writes against four real {@code RocksStore} nodes that check ownership against the ring of
 * epoch 5 (node-4 joined), while the client's routing still holds epoch 4 until it is asked to wait for 5.
 */
class RoutedWriterTest {
  @TempDir Path dir;
  private final Rings.View nodesView = new Rings.View(Rings.EPOCH_5);
  private final Map<String, Store> nodes = new LinkedHashMap<>();
  /** Client writes (puts and deletes) each node received. */
  private final Map<String, AtomicInteger> writes = new ConcurrentHashMap<>();

  @BeforeEach
  void open() {
    for (String id : Rings.NODES) {
      String zone = Rings.EPOCH_5.member(id).zone();
      nodes.put(id, OwnershipCheckedStore.wrap(RocksStore.open(dir.resolve(id), id, zone), nodesView));
      writes.put(id, new AtomicInteger());
    }
  }

  @AfterEach
  void close() {
    nodes.values().forEach(Store::close);
  }

  /** The nodes as the writer reaches them: counting the client writes each receives. */
  private Store counted(String id) {
    Store node = nodes.get(id);
    return (Store) Proxy.newProxyInstance(Store.class.getClassLoader(), new Class<?>[] {Store.class},
        (proxy, method, args) -> {
          if (method.getName().equals("put") || method.getName().equals("delete")) {
            writes.get(id).incrementAndGet();
          }
          try {
            return method.invoke(node, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  private RoutedWriter writer(SteppingRouting routing) {
    return RoutedWriter.create(routing, this::counted);
  }

  private static List<String> replicas(RingSnapshot ring, String key) {
    return ring.replicasOf(bytes(key)).ids();
  }

  /** A key one of whose replicas at epoch 4 is no replica at epoch 5: it moved (to node-4). */
  private static String movedKey() {
    return Rings.key(k -> !replicas(Rings.EPOCH_5, k).containsAll(replicas(Rings.EPOCH_4, k)));
  }

  private List<String> holders(String key) {
    List<String> holders = new ArrayList<>();
    nodes.forEach((id, store) -> store.get(bytes(key)).ifPresent(v -> holders.add(id)));
    return holders;
  }

  @Test
  void shouldConvergeFromAStaleRouteToTheNewReplicasRetryingOnce() {
    String key = movedKey();
    SteppingRouting routing = new SteppingRouting(Rings.EPOCH_4, Rings.EPOCH_5);

    RoutedWriter.Written written = writer(routing).put(bytes(key), bytes("v"));

    List<String> now = replicas(Rings.EPOCH_5, key);
    assertThat(written).isEqualTo(new RoutedWriter.Written(5, now, true));
    assertThat(holders(key)).as("the new replicas only").containsExactlyInAnyOrderElementsOf(now);
    assertThat(routing.awaited()).as("one wait, for the epoch the refusal named").containsExactly(5L);
    assertThat(routing.waits()).containsExactly(RoutedWriter.DEFAULT_EPOCH_WAIT);
    assertThat(routing.routes()).as("routed, then routed again once").isEqualTo(2);
    int sent = writes.values().stream().mapToInt(AtomicInteger::get).sum();
    assertThat(sent).as("every old replica once, every new replica once").isEqualTo(
        replicas(Rings.EPOCH_4, key).size() + now.size());
  }

  @Test
  void shouldConvergeADeleteFromAStaleRoute() {
    String key = movedKey();
    for (Store node : nodes.values()) {
      node.apply(List.of(Entry.of(bytes(key), bytes("old"))));
    }
    List<String> dropped = new ArrayList<>(replicas(Rings.EPOCH_4, key));
    dropped.removeAll(replicas(Rings.EPOCH_5, key));
    List<String> untouched = new ArrayList<>(Rings.NODES);
    untouched.removeAll(replicas(Rings.EPOCH_5, key));

    RoutedWriter.Written written = writer(new SteppingRouting(Rings.EPOCH_4, Rings.EPOCH_5)).delete(bytes(key));

    assertThat(written).isEqualTo(new RoutedWriter.Written(5, replicas(Rings.EPOCH_5, key), true));
    assertThat(holders(key)).as("the node the key moved away from refused; cleanup removes its copy later")
        .containsExactlyInAnyOrderElementsOf(untouched).containsAll(dropped);
  }

  /**
   * The replicas of a route are written at the same time: each replica here answers only once both have been
   * asked (a latch of two), which a writer sending them one after another never gets to (it would time out on the
   * first). The sequential writer shows the difference.
   */
  @Test
  void shouldWriteTheReplicasOfARouteInParallel() {
    String key = Rings.key(k -> true);
    List<String> route = replicas(Rings.EPOCH_5, key);
    java.util.concurrent.CountDownLatch bothAsked = new java.util.concurrent.CountDownLatch(route.size());
    java.util.function.Function<String, Store> meeting = id -> (Store) Proxy.newProxyInstance(
        Store.class.getClassLoader(), new Class<?>[] {Store.class}, (proxy, method, args) -> {
          if (method.getName().equals("put")) {
            bothAsked.countDown();
            if (!bothAsked.await(2, java.util.concurrent.TimeUnit.SECONDS)) {
              throw new StoreException.Unavailable(id + ": the other replica was not asked meanwhile", null);
            }
          }
          try {
            return method.invoke(nodes.get(id), args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });

    RoutedWriter.Written written = RoutedWriter.create(new SteppingRouting(Rings.EPOCH_5), meeting)
        .put(bytes(key), bytes("v"));

    assertThat(written.replicas()).as("in preference order").isEqualTo(route);
    assertThat(holders(key)).containsExactlyInAnyOrderElementsOf(route);
    java.util.concurrent.CountDownLatch again = new java.util.concurrent.CountDownLatch(route.size());
    assertThatThrownBy(() -> RoutedWriter.create(new SteppingRouting(Rings.EPOCH_5), id -> (Store) Proxy
        .newProxyInstance(Store.class.getClassLoader(), new Class<?>[] {Store.class}, (proxy, method, args) -> {
          if (method.getName().equals("put")) {
            again.countDown();
            if (!again.await(200, java.util.concurrent.TimeUnit.MILLISECONDS)) {
              throw new StoreException.Unavailable(id + ": alone", null);
            }
          }
          return method.invoke(nodes.get(id), args);
        })).sequential().put(bytes(key), bytes("w")))
        .as("one after another, the first replica waits alone").isInstanceOf(StoreException.ReplicasFailed.class);
  }

  @Test
  void shouldWriteOnceWhenTheRouteIsCurrent() {
    String key = movedKey();
    SteppingRouting routing = new SteppingRouting(Rings.EPOCH_5);

    RoutedWriter.Written written = writer(routing).put(bytes(key), bytes("v"));

    assertThat(written).isEqualTo(new RoutedWriter.Written(5, replicas(Rings.EPOCH_5, key), false));
    assertThat(routing.awaited()).isEmpty();
    assertThat(holders(key)).containsExactlyInAnyOrderElementsOf(replicas(Rings.EPOCH_5, key));
  }

  @Test
  void shouldLandAStaleWriteForAKeyThatDidNotMoveWithoutARetry() {
    String key = Rings.key(k -> replicas(Rings.EPOCH_4, k).equals(replicas(Rings.EPOCH_5, k)));
    SteppingRouting routing = new SteppingRouting(Rings.EPOCH_4, Rings.EPOCH_5);

    RoutedWriter.Written written = writer(routing).put(bytes(key), bytes("v"));

    assertThat(written).as("its replicas still own it at epoch 5").isEqualTo(
        new RoutedWriter.Written(4, replicas(Rings.EPOCH_4, key), false));
    assertThat(routing.awaited()).isEmpty();
  }

  @Test
  void shouldFailWithStaleEpochWhenTheRetryIsRefusedToo() {
    String key = movedKey();
    // node-4, where the key moved, is already fenced for the next move.
    nodes.get("node-4").fence(RingRange.whole(), 6);
    SteppingRouting routing = new SteppingRouting(Rings.EPOCH_4, Rings.EPOCH_5);
    String dropped = replicas(Rings.EPOCH_4, key).stream()
        .filter(n -> !replicas(Rings.EPOCH_5, key).contains(n)).findFirst().orElseThrow();

    assertThatThrownBy(() -> writer(routing).put(bytes(key), bytes("v")))
        .isInstanceOfSatisfying(StoreException.StaleEpoch.class, e -> {
          assertThat(e.triedEpochs()).containsExactly(4L, 5L);
          assertThat(e.askedEpoch()).isEqualTo(6);
          assertThat(e.retriable()).isTrue();
        })
        .hasMessageContaining("was refused at epoch 4 by " + dropped + " (it is not a replica of range "
            + Rings.rangeOf(Rings.EPOCH_5, key) + " at epoch 5)")
        .hasMessageContaining("and again on the retry at epoch 5 by node-4 (its range " + RingRange.whole()
            + " is fenced for epochs below 6); it was retried once");
    assertThat(routing.awaited()).as("no second wait").containsExactly(5L);
    assertThat(nodes.get("node-4").get(bytes(key))).isEmpty();
  }

  @Test
  void shouldFailWithStaleEpochWhenTheNewerEpochDoesNotArrive() {
    String key = movedKey();
    SteppingRouting routing = new SteppingRouting(Rings.EPOCH_4, Rings.EPOCH_5).withholdNewerRings();

    assertThatThrownBy(() -> writer(routing).withEpochWait(Duration.ofMillis(150)).put(bytes(key), bytes("v")))
        .isInstanceOfSatisfying(StoreException.StaleEpoch.class, e -> {
          assertThat(e.triedEpochs()).containsExactly(4L);
          assertThat(e.askedEpoch()).isEqualTo(5);
          assertThat(e.retriable()).isTrue();
        })
        .hasMessageContaining("at epoch 4 was refused by")
        .hasMessageContaining("epoch 5 did not reach the routing within 150 ms: retry later");
    assertThat(routing.waits()).containsExactly(Duration.ofMillis(150));
    assertThat(routing.routes()).isEqualTo(1);
    assertThat(nodes.get("node-4").get(bytes(key))).as("never sent to the new replica").isEmpty();
  }

  @Test
  void shouldNameEachFailedReplicaAndTheOnesThatApplied() {
    String key = movedKey();
    List<String> now = replicas(Rings.EPOCH_5, key);
    nodes.get(now.get(1)).close();

    assertThatThrownBy(() -> writer(new SteppingRouting(Rings.EPOCH_5)).put(bytes(key), bytes("v")))
        .isInstanceOfSatisfying(StoreException.ReplicasFailed.class, e -> {
          assertThat(e.epoch()).isEqualTo(5);
          assertThat(e.failures()).containsOnlyKeys(now.get(1));
          assertThat(e.failures().get(now.get(1))).isInstanceOf(StoreException.Unavailable.class);
          assertThat(e.applied()).containsExactly(now.get(0));
          assertThat(e.retriable()).isTrue();
          assertThat(e.getSuppressed()).containsExactly(e.failures().get(now.get(1)));
        })
        .hasMessageContaining("failed on 1 of 2 replicas (" + now.get(1) + ": Unavailable ")
        .hasMessageContaining("applied on [" + now.get(0) + "], which keep it");
  }

  @Test
  void shouldWriteNowhereWhenTheRouteNamesANodeWithoutAStore() {
    String key = movedKey();
    RoutedWriter writer = RoutedWriter.create(new SteppingRouting(Rings.EPOCH_5),
        id -> id.equals("node-4") ? null : nodes.get(id));

    assertThatThrownBy(() -> writer.put(bytes(key), bytes("v")))
        .isExactlyInstanceOf(StoreException.class)
        .hasMessageContaining("no store for node 'node-4', a replica of key 0x" + java.util.HexFormat.of()
            .formatHex(bytes(key)) + " at epoch 5")
        .hasMessageContaining("nothing was written");
    assertThat(holders(key)).isEmpty();
  }

  @Test
  void shouldCheckTheKeyAndValueBeforeRouting() {
    SteppingRouting routing = new SteppingRouting(Rings.EPOCH_5);
    RoutedWriter writer = writer(routing);

    assertThatThrownBy(() -> writer.put(bytes("k"), null)).isInstanceOf(StoreException.BadRequest.class)
        .hasMessageContaining("value is missing");
    assertThatThrownBy(() -> writer.delete(new byte[Store.MAX_KEY_BYTES + 1]))
        .isInstanceOf(StoreException.BadRequest.class).hasMessageContaining("a key must be 1 to 16384 bytes");
    assertThat(routing.routes()).isZero();
    assertThatThrownBy(() -> writer.withEpochWait(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("it must be zero or positive");
  }

  @Test
  void shouldBeUnavailableWhileTheRoutingHasNoRing() {
    Routing empty = new Routing() {
      @Override
      public Route route(byte[] key) {
        return null;
      }

      @Override
      public boolean awaitEpoch(long epoch, Duration timeout) {
        return false;
      }
    };

    assertThatThrownBy(() -> RoutedWriter.create(empty, nodes::get).put(bytes("k"), bytes("v")))
        .isInstanceOf(StoreException.Unavailable.class)
        .hasMessageContaining("the routing has no ring for key 0x6b yet");
  }

  @Test
  void rejectsAMalformedRoute() {
    assertThatThrownBy(() -> new Routing.Route(5, List.of("node-1", "node-1")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names node 'node-1' twice");
    assertThatThrownBy(() -> new Routing.Route(5, List.of()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names no replica");
    assertThatThrownBy(() -> new Routing.Route(-1, List.of("node-1")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("epoch -1 is negative");
  }

  /** The same convergence through the network: RemoteStore -> HTTP -> NodeServer -> ownership check -> RocksDB. */
  @Test
  void shouldConvergeOverHttp() {
    List<NodeServer> servers = new ArrayList<>();
    Map<String, Store> remotes = new LinkedHashMap<>();
    try {
      nodes.forEach((id, store) -> {
        NodeServer server = NodeServer.start(store, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        servers.add(server);
        remotes.put(id, RemoteStore.connect(server.hostPort(), Duration.ofSeconds(10)));
      });
      String key = movedKey();
      RoutedWriter writer = RoutedWriter.create(new SteppingRouting(Rings.EPOCH_4, Rings.EPOCH_5), remotes::get);

      RoutedWriter.Written written = writer.put(bytes(key), bytes("v"));

      assertThat(written).isEqualTo(new RoutedWriter.Written(5, replicas(Rings.EPOCH_5, key), true));
      assertThat(holders(key)).containsExactlyInAnyOrderElementsOf(replicas(Rings.EPOCH_5, key));
    } finally {
      remotes.values().forEach(Store::close);
      servers.forEach(NodeServer::close);
    }
  }
}
