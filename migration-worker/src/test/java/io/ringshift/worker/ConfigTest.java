package io.ringshift.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ConfigTest {

  @Test
  void shouldRefuseLimitsThatBreakTheirRulesNamingTheValue() {
    assertThatThrownBy(() -> Limits.DEFAULTS.withRates(-1, 0))
        .hasMessage("bytesPerSecond was -1; it must be > 0, or 0 for unlimited");
    assertThatThrownBy(() -> Limits.DEFAULTS.withRates(0, -2))
        .hasMessage("perSourceBytesPerSecond was -2; it must be > 0, or 0 for unlimited");
    assertThatThrownBy(() -> Limits.DEFAULTS.withCaps(0, 1, 1))
        .hasMessage("maxTasks was 0; a worker must run at least 1 task");
    assertThatThrownBy(() -> Limits.DEFAULTS.withCaps(1, 0, 1)).hasMessage("maxTasksPerSource was 0; it must be >= 1");
    assertThatThrownBy(() -> Limits.DEFAULTS.withCaps(1, 1, 0)).hasMessage("maxTasksPerTarget was 0; it must be >= 1");
  }

  @Test
  void shouldDefaultToThrottledCappedCopies() {
    assertThat(Limits.DEFAULTS).isEqualTo(new Limits(100L << 20, 40L << 20, 8, 2, 2));
    assertThat(TaskTuning.DEFAULTS.checkpointBytes()).isEqualTo(4L << 20);
    assertThat(TaskTuning.DEFAULTS.checkpointInterval()).isEqualTo(Duration.ofSeconds(2));
    WorkerConfig config = WorkerConfig.of("127.0.0.1:9092", "worker-1", NodeDirectory.empty());
    assertThat(config.groupId()).isEqualTo("ringshift-migration-worker");
    assertThat(config.grace()).isEqualTo(Duration.ofMinutes(10));
    assertThat(config.topics().tasks().name()).isEqualTo("ring.tasks");
  }

  @Test
  void shouldRefuseTuningThatBreaksItsRules() {
    assertThatThrownBy(() -> TaskTuning.DEFAULTS.withBatch(0, 10)).hasMessage("batchBytes was 0; it must be >= 1");
    assertThatThrownBy(() -> TaskTuning.DEFAULTS.withCheckpoints(1, Duration.ZERO))
        .hasMessage("checkpointInterval was PT0S; it must be > 0");
    assertThatThrownBy(() -> TaskTuning.DEFAULTS.withCatchUp(-1, 1)).hasMessage("catchUpLag was -1; it must be >= 0");
  }

  @Test
  void shouldRefuseAWorkerIdThatCannotBeAGroupInstanceId() {
    WorkerConfig config = WorkerConfig.of("127.0.0.1:9092", "worker-1", NodeDirectory.empty());
    assertThatThrownBy(() -> WorkerConfig.of("127.0.0.1:9092", "worker 1", NodeDirectory.empty()))
        .hasMessage("workerId was \"worker 1\"; it must be 1 to 200 letters, digits, '.', '_' or '-'");
    assertThatThrownBy(() -> config.withGrace(Duration.ofSeconds(-1))).hasMessage("grace was PT-1S; it must be >= 0");
    assertThatThrownBy(() -> config.withGroupId("")).hasMessageStartingWith("groupId was \"\"");
  }
}
