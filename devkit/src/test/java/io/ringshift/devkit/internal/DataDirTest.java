package io.ringshift.devkit.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DataDirTest {
  @TempDir
  Path tmp;

  @Test
  void createsAMissingKeptDirectoryAndKeepsIt() throws Exception {
    DataDir dir = DataDir.kept(tmp.resolve("a/b"));

    assertThat(dir.path()).isDirectory();
    assertThat(dir.isTemporary()).isFalse();
    assertThat(dir.formattedClusterId()).isEmpty();
    dir.deleteIfTemporary();
    assertThat(dir.path()).isDirectory();
  }

  @Test
  void readsTheClusterIdKafkaWroteSoARestartKeepsIt() throws Exception {
    Path path = Files.createDirectories(tmp.resolve("kafka"));
    Files.writeString(path.resolve("meta.properties"), "#\nnode.id=1\nversion=1\ncluster.id=abcDEF123\n");

    assertThat(DataDir.kept(path).formattedClusterId()).contains("abcDEF123");
  }

  @Test
  void rejectsAMetaPropertiesWithoutClusterId() throws Exception {
    Path path = Files.createDirectories(tmp.resolve("kafka"));
    Files.writeString(path.resolve("meta.properties"), "node.id=1\n");

    assertThatThrownBy(() -> DataDir.kept(path).formattedClusterId())
        .isInstanceOf(IOException.class)
        .hasMessageEndingWith("meta.properties has no cluster.id");
  }

  @Test
  void refusesAFile() throws Exception {
    Path file = Files.writeString(tmp.resolve("file"), "x");

    assertThatThrownBy(() -> DataDir.kept(file))
        .isInstanceOf(DataDir.InvalidDataDirException.class)
        .hasMessage(file + " is not a directory");
  }

  @Test
  void refusesANonEmptyDirectoryKafkaDidNotFormat() throws Exception {
    Path home = Files.createDirectories(tmp.resolve("home"));
    Files.writeString(home.resolve("notes.txt"), "precious");

    assertThatThrownBy(() -> DataDir.kept(home))
        .isInstanceOf(DataDir.InvalidDataDirException.class)
        .hasMessageStartingWith(home + " is not empty and holds no Kafka meta.properties");
  }

  @Test
  void deletesATemporaryDirectoryWithItsContentsTwiceWithoutComplaint() throws Exception {
    DataDir dir = DataDir.temporary();
    Files.createDirectories(dir.path().resolve("topic-0"));
    Files.writeString(dir.path().resolve("topic-0/00000.log"), "data");

    dir.deleteIfTemporary();
    dir.deleteIfTemporary();

    assertThat(dir.path()).doesNotExist();
  }
}
