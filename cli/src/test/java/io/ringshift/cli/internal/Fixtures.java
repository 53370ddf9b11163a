package io.ringshift.cli.internal;

import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.RingSnapshotCodec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** Members files and snapshot files for tests. */
public final class Fixtures {
  private Fixtures() {}

  /** JSON for {@code n} members node-001.. in {@code zones} zones az-1.., weight omitted (1). */
  public static String membersJson(int n, int zones) {
    StringBuilder json = new StringBuilder("[\n");
    for (int i = 1; i <= n; i++) {
      json.append(String.format(Locale.ROOT, "  {\"id\": \"node-%03d\", \"zone\": \"az-%d\"}%s%n",
          i, 1 + (i - 1) % zones, i < n ? "," : ""));
    }
    return json.append("]\n").toString();
  }

  /** The ring {@link #membersJson} describes, built with the library directly. */
  static RingBuilder ring(int n, int zones) {
    RingBuilder builder = RingSnapshot.builder();
    for (int i = 1; i <= n; i++) {
      builder.addMember(String.format(Locale.ROOT, "node-%03d", i), "az-" + (1 + (i - 1) % zones));
    }
    return builder;
  }

  public static Path write(Path file, String content) {
    try {
      return Files.writeString(file, content, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static Path snapshot(Path file, RingSnapshot ring) {
    try {
      return Files.write(file, new RingSnapshotCodec().encode(ring));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
