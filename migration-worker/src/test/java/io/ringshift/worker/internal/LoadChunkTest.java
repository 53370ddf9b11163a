package io.ringshift.worker.internal;

import static io.ringshift.worker.internal.StoreFixture.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.storage.Entry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The hand-over of a bulk load's chunk from the task to the thread that sends the load. */
class LoadChunkTest {
  private final TaskControl control = new TaskControl();

  private static List<Entry> piece(String... keys) {
    List<Entry> piece = new ArrayList<>();
    for (String k : keys) {
      piece.add(Entry.of(bytes(k), bytes("v")));
    }
    return piece;
  }

  private static CompletableFuture<List<String>> reader(LoadChunk chunk) {
    return CompletableFuture.supplyAsync(() -> {
      List<String> read = new ArrayList<>();
      try {
        if (!chunk.awaitFirst()) {
          return read;
        }
        chunk.forEachRemaining(e -> read.add(new String(e.key(), java.nio.charset.StandardCharsets.UTF_8)));
        return read;
      } finally {
        chunk.released();
      }
    });
  }

  @Test
  void shouldHandThePiecesOverInOrderUntilTheEnd() throws Exception {
    LoadChunk chunk = new LoadChunk();
    CompletableFuture<List<String>> read = reader(chunk);
    for (int i = 0; i < 10; i++) {
      assertThat(chunk.put(piece("k" + i + "a", "k" + i + "b"), control)).isTrue();
    }
    assertThat(chunk.end(control)).isTrue();
    assertThat(read.get(10, TimeUnit.SECONDS)).hasSize(20).startsWith("k0a", "k0b", "k1a").endsWith("k9b");
  }

  @Test
  void shouldFailTheReaderWhenAborted() {
    LoadChunk chunk = new LoadChunk();
    CompletableFuture<List<String>> read = CompletableFuture.supplyAsync(() -> {
      List<String> keys = new ArrayList<>();
      chunk.forEachRemaining(e -> keys.add(new String(e.key(), java.nio.charset.StandardCharsets.UTF_8)));
      return keys;
    });
    assertThat(chunk.put(piece("a"), control)).isTrue();
    chunk.abort("the copy stopped");
    assertThatThrownBy(() -> read.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(LoadChunk.Aborted.class)
        .hasMessageContaining("the copy stopped");
  }

  @Test
  void shouldSendNoLoadForAChunkEndedOrAbortedBeforeItsFirstPiece() throws Exception {
    LoadChunk empty = new LoadChunk();
    CompletableFuture<List<String>> read = reader(empty);
    assertThat(empty.end(control)).isTrue();
    assertThat(read.get(10, TimeUnit.SECONDS)).isEmpty();

    LoadChunk aborted = new LoadChunk();
    aborted.abort("stopped");
    assertThat(aborted.awaitFirst()).isFalse();
  }

  @Test
  void shouldFailABodyStillBeingReadOnceItsLoadEnded() {
    LoadChunk chunk = new LoadChunk();
    assertThat(chunk.put(piece("a"), control)).isTrue();
    assertThat(chunk.next().key()).isEqualTo(bytes("a"));
    chunk.released();
    assertThatThrownBy(chunk::hasNext).isInstanceOf(LoadChunk.Aborted.class)
        .hasMessage("the load of this chunk already ended");
  }

  @Test
  void shouldRefuseMoreOnceTheReaderIsGoneAndStopWithTheTask() {
    LoadChunk chunk = new LoadChunk();
    chunk.released();
    assertThat(chunk.put(piece("a"), control)).as("the load ended: nothing takes more").isFalse();

    LoadChunk full = new LoadChunk();
    for (int i = 0; i < LoadChunk.DEPTH; i++) {
      assertThat(full.put(piece("p" + i), control)).isTrue();
    }
    control.stop(TaskControl.Stop.CANCEL);
    assertThatThrownBy(() -> full.put(piece("one too many"), control)).isInstanceOf(TaskControl.Stopped.class);
  }
}
