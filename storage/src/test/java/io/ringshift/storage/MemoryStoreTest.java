package io.ringshift.storage;

import static io.ringshift.storage.TestKeys.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.ring.RingRange;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The storage contract against a {@link MemoryStore}, the store of the deterministic simulation: the same tests as
 * RocksDB's. A data directory stands for the store's durable state, which a reopen opens again.
 */
class MemoryStoreTest extends StoreContractTest {
  private final Map<Path, MemoryStore.Durable> states = new HashMap<>();
  private MemoryStore opened;

  @Override
  Store openStore(Path dataDir) {
    MemoryStore.Durable state = states.get(dataDir);
    opened = state == null ? MemoryStore.create(NODE, ZONE, "incarnation-" + dataDir.getFileName())
        : MemoryStore.open(state);
    states.put(dataDir, opened.durable());
    return opened;
  }

  @Override
  void closeStore() {
    if (opened != null) {
      opened.close();
      opened = null;
    }
  }

  @Override
  int fenceRounds() {
    return 20;
  }

  @Test
  void shouldPurgeATombstoneOnlyAfterItsRetentionAndNeverANewerWrite() {
    AtomicLong now = new AtomicLong(1_000_000);
    try (MemoryStore clocked = MemoryStore.create("node-9", ZONE, "i", now::get, Duration.ofMinutes(10))) {
      clocked.delete(bytes("gone"), 0, Version.of(50, 0, 1));
      clocked.delete(bytes("back"), 0, Version.of(50, 0, 1));
      now.addAndGet(Duration.ofMinutes(5).toMillis());
      clocked.put(bytes("back"), bytes("written after its deletion"), 0, Version.of(60, 0, 1));
      clocked.delete(bytes("later"), 0, Version.of(70, 0, 1));
      MemoryStore.Durable durable = clocked.durable();

      assertThat(durable.purgeTombstones()).isZero();
      now.addAndGet(Duration.ofMinutes(6).toMillis());
      assertThat(durable.purgeTombstones()).isEqualTo(1);
      assertThat(durable.entry(bytes("gone"))).isEmpty();
      assertThat(durable.entry(bytes("later"))).hasValue(Entry.of(bytes("later"), null, Version.of(70, 0, 1)));
      assertThat(clocked.get(bytes("back"))).hasValue(bytes("written after its deletion"));
      now.addAndGet(Duration.ofMinutes(5).toMillis());
      assertThat(durable.purgeTombstones()).isEqualTo(1);
      assertThat(durable.entry(bytes("later"))).isEmpty();
      assertThat(clocked.digest(RingRange.whole()).keys()).isEqualTo(1);
    }
  }

  /** The log retention ends: the log is cut, the data stays. */
  @Override
  void restartAfterLogRetentionEnds() {
    MemoryStore.Durable state = states.get(dataDir());
    closeStore();
    state.purgeLog();
    store = openStore(dataDir());
  }
}
