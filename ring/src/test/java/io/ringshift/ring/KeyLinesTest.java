package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class KeyLinesTest {
  private final RingSnapshot ring = RingSnapshot.builder().vnodes(16).replicas(2)
      .addMember("a", "z1").addMember("b", "z2").addMember("c", "z3").build();

  private String owners(String key) {
    return String.join(",", ring.replicasOf(key).ids());
  }

  @Test
  void shouldAnswerEveryLineInOrderWithItsOwners() throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();

    long keys = KeyLines.lookUp(ring, 2, new ByteArrayInputStream("user:1\r\n\nlast".getBytes(StandardCharsets.UTF_8)),
        out);

    assertThat(keys).isEqualTo(3);
    assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("user:1\t" + owners("user:1") + "\n"
        + "\t" + owners("") + "\n" + "last\t" + owners("last") + "\n");
  }

  @Test
  void shouldGiveOnlyTheFirstOwnersWhenAskedForFewer() throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();

    KeyLines.lookUp(ring, 1, new ByteArrayInputStream("k\n".getBytes(StandardCharsets.UTF_8)), out);

    assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("k\t" + ring.replicasOf("k").ids().get(0) + "\n");
  }
}
