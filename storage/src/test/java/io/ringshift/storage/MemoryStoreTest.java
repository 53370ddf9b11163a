package io.ringshift.storage;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

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

  /** The log retention ends: the log is cut, the data stays. */
  @Override
  void restartAfterLogRetentionEnds() {
    MemoryStore.Durable state = states.get(dataDir());
    closeStore();
    state.purgeLog();
    store = openStore(dataDir());
  }
}
