package io.ringshift.systemtests.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.ComposeContainer;
import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.containers.ContainerState;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * The whole {@code docker/compose.yaml} stack on a Docker engine: it builds the image, brings up 3 brokers and every
 * role, declares the cluster, joins the spare node-7 under the writer's load and audits the result. Skipped where
 * no Docker engine is reachable (as on the machine this project is built on); docs/operations.md says so.
 */
@Testcontainers(disabledWithoutDocker = true)
class ComposeStackIT {
  private static final Duration STARTUP = Duration.ofMinutes(15);
  private static final String RUNNING = ".*Ctrl-C stops it.*";

  @Container
  static final ComposeContainer STACK = started(new ComposeContainer(ComposeFile.DOCKER.resolve("compose.yaml")
      .toFile())
      .withBuild(true)
      .withOptions("--profile", "scale-out"));

  private static ComposeContainer started(ComposeContainer stack) {
    stack.waitingFor("orchestrator", Wait.forLogMessage(RUNNING, 1).withStartupTimeout(STARTUP));
    stack.waitingFor("publisher", Wait.forLogMessage(RUNNING, 1).withStartupTimeout(STARTUP));
    for (String role : new String[] {"worker-1", "worker-2"}) {
      stack.waitingFor(role, Wait.forLogMessage(RUNNING, 1).withStartupTimeout(STARTUP));
    }
    for (int i = 1; i <= 7; i++) {
      stack.waitingFor("node-" + i, Wait.forLogMessage(RUNNING, 1).withStartupTimeout(STARTUP));
    }
    return stack;
  }

  @Test
  void shouldJoinTheSpareNodeUnderLoadAndPassTheAudit() throws Exception {
    ContainerState tools = STACK.getContainerByServiceName("writer").orElseThrow();
    ExecResult init = tools.execInContainer("ringshift", "init", "--members", "/config/members.json", "--wait",
        "120");
    assertThat(init.getExitCode()).as(init.getStdout() + init.getStderr()).isZero();
    awaitPublished(tools, 1);

    ExecResult join = tools.execInContainer("ringshift", "join", "node-7", "--zone", "az-1", "--wait", "120");
    assertThat(join.getExitCode()).as(join.getStdout() + join.getStderr()).isZero();
    awaitPublished(tools, 2);

    ExecResult audit = tools.execInContainer("ringshift", "audit", "--trusted-key", "/keys/publisher.key.pub");
    assertThat(audit.getExitCode()).as(audit.getStdout() + audit.getStderr()).isZero();
  }

  private static void awaitPublished(ContainerState tools, long epoch) {
    await("epoch " + epoch + " PUBLISHED").atMost(Duration.ofMinutes(10)).pollInterval(Duration.ofSeconds(2))
        .until(() -> tools.execInContainer("ringshift", "status").getStdout()
            .contains("epoch " + epoch + " PUBLISHED"));
  }
}
