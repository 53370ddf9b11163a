package io.ringshift.cli.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LogSettingsTest {
  private static final String LEVEL = "org.slf4j.simpleLogger.defaultLogLevel";

  @Test
  void shouldSilenceKafkaForEveryCommandButDev() {
    assertThat(LogSettings.defaults(false, false)).containsEntry(LEVEL, "off").hasSize(1);
  }

  @Test
  void shouldShowWarningsForDevExceptTheExpectedOnes() {
    assertThat(LogSettings.defaults(true, true))
        .containsEntry(LEVEL, "warn")
        .containsEntry("org.slf4j.simpleLogger.logFile", "System.err")
        .containsEntry("org.slf4j.simpleLogger.log.org.apache.kafka.controller.QuorumController", "error")
        .doesNotContainKey("org.slf4j.simpleLogger.log.org.apache.kafka.streams.processor.internals.StateDirectory");
    assertThat(LogSettings.defaults(true, false))
        .containsEntry("org.slf4j.simpleLogger.log.org.apache.kafka.streams.processor.internals.StateDirectory",
            "error");
  }

  @Test
  void shouldFindTheSubcommand() {
    assertThat(LogSettings.firstCommand(new String[] {"dev", "--port", "0"})).isEqualTo("dev");
    assertThat(LogSettings.firstCommand(new String[] {"--version"})).isNull();
    assertThat(LogSettings.firstCommand(new String[] {"status", "--bootstrap", "x:1"})).isEqualTo("status");
  }

  @Test
  void shouldLeaveALevelTheUserSet() {
    String before = System.getProperty(LEVEL);
    try {
      System.setProperty(LEVEL, "debug");
      LogSettings.configure(new String[] {"status"});
      assertThat(System.getProperty(LEVEL)).isEqualTo("debug");
    } finally {
      if (before == null) {
        System.clearProperty(LEVEL);
      } else {
        System.setProperty(LEVEL, before);
      }
    }
  }
}
