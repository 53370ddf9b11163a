package io.ringshift.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NodeDirectoryTest {

  @Test
  void shouldReadNodesFileSkippingCommentsAndBlankLines(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("nodes.txt");
    Files.writeString(file, "# the storage nodes\nnode-1 127.0.0.1:7001\n\n  node-2   localhost:7002  # zone b\n"
        + "node-3 [::1]:7003\n");

    NodeDirectory nodes = NodeDirectory.read(file);

    assertThat(nodes.nodes()).containsOnlyKeys("node-1", "node-2", "node-3");
    assertThat(nodes.address("node-2")).contains(new NodeDirectory.Address("localhost", 7002));
    assertThat(nodes.address("node-3").orElseThrow().toString()).isEqualTo("[::1]:7003");
    assertThat(nodes.address("node-4")).isEmpty();
  }

  @Test
  void shouldNameTheFileLineAndRuleOfAMalformedLine() {
    assertThatThrownBy(() -> NodeDirectory.parse(List.of("node-1 127.0.0.1:7001", "node-2 localhost"), "n.txt"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("n.txt line 2: address was \"localhost\"; write HOST:PORT, for example 127.0.0.1:7001");
    assertThatThrownBy(() -> NodeDirectory.parse(List.of("node-1"), "n.txt"))
        .hasMessage("n.txt line 1 was \"node-1\"; each line is NODE-ID HOST:PORT, for example: node-1 127.0.0.1:7001");
    assertThatThrownBy(() -> NodeDirectory.parse(List.of("node-1 h:70000"), "n.txt"))
        .hasMessage("n.txt line 1: port was 70000; it must be between 1 and 65535");
  }

  @Test
  void shouldRefuseANodeListedTwice() {
    assertThatThrownBy(() -> NodeDirectory.parse(List.of("node-1 a:1", "node-1 b:2"), "n.txt"))
        .hasMessage("n.txt line 2: node node-1 was listed twice (a:1 and b:2); give each node one address");
  }

  @Test
  void shouldAddNodesGivenOneByOne() {
    NodeDirectory nodes = NodeDirectory.empty().with("node-1", NodeDirectory.Address.parse("h1:1"))
        .with("node-2", NodeDirectory.Address.parse("h2:2"));
    assertThat(nodes.nodes().keySet()).containsExactly("node-1", "node-2");
    assertThatThrownBy(() -> nodes.with("bad id", NodeDirectory.Address.parse("h:1")))
        .hasMessageContaining("node id was \"bad id\"");
  }

  @Test
  void shouldSayWhichFileCannotBeRead(@TempDir Path dir) {
    Path missing = dir.resolve("missing.txt");
    assertThatThrownBy(() -> NodeDirectory.read(missing))
        .isInstanceOf(UncheckedIOException.class)
        .hasMessageContaining("cannot read the nodes file " + missing);
  }
}
