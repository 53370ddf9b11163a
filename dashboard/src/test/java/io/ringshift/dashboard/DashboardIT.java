package io.ringshift.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.localplane.LocalControlPlane;
import io.ringshift.localplane.LocalNodes;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.storage.Entry;
import io.ringshift.worker.Limits;
import io.ringshift.worker.MigrationWorker;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The dashboard in a real browser: headless Chromium (Debian's {@code chromium} and {@code chromium-driver}, which
 * {@code .ci/run} installs when they are missing) driven by Selenium, on a running plane. The page is opened once;
 * a JOIN is written; the page must show epoch 2 in flight, its tasks moving to VERIFIED, and epoch 2 PUBLISHED on the
 * timeline, all without reloading. A screenshot taken mid-join goes to {@code target/dashboard.png}.
 */
class DashboardIT {
  private static final String CLUSTER = "default";
  private static LocalControlPlane plane;
  private static Dashboard dashboard;
  private static WebDriver browser;

  @BeforeAll
  static void start() {
    Path chromium = executable("chromium", "chromium-browser", "google-chrome");
    Path driver = executable("chromedriver");
    Assumptions.assumeTrue(chromium != null && driver != null, "no chromium and chromedriver on this machine (PATH "
        + "or /usr/bin): install them with `apt-get install chromium chromium-driver`, as .ci/run does");
    plane = LocalControlPlane.builder().port(0).nodes(4, 0).spares(1).worker(Duration.ofSeconds(2))
        .workerLimits(Limits.unlimited().withRates(192 * 1024, 0)).start();
    LocalNodes nodes = plane.nodes().orElseThrow();
    Map<String, String> clientPorts = new LinkedHashMap<>();
    nodes.nodes().forEach(n -> clientPorts.put(n.id(), n.hostPort()));
    MigrationWorker worker = plane.worker().orElseThrow();
    dashboard = Dashboard.start(DashboardConfig.of(plane.bootstrapServers()).withTopics(plane.topics())
        .withBind("127.0.0.1", 0).withNodes(clientPorts)
        .withWorkers(() -> List.of(new DashboardConfig.WorkerLimits(worker.config().workerId(),
            worker.limits().bytesPerSecond(), worker.limits().perSourceBytesPerSecond(), worker.limits().maxTasks(),
            worker.limits().maxTasksPerSource(), worker.limits().maxTasksPerTarget(), worker.activeTasks()))));
    ChromeOptions options = new ChromeOptions();
    options.setBinary(chromium.toFile());
    options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,2000");
    ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(driver.toFile())
        .usingAnyFreePort().build();
    browser = new ChromeDriver(service, options);
  }

  @AfterAll
  static void stop() {
    if (browser != null) {
      browser.quit();
    }
    if (dashboard != null) {
      dashboard.close();
    }
    if (plane != null) {
      plane.close();
    }
  }

  /** The first of {@code names} found on the PATH or in /usr/bin, or null. */
  private static Path executable(String... names) {
    List<String> dirs = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)));
    dirs.add("/usr/bin");
    for (String name : names) {
      for (String dir : dirs) {
        Path p = Path.of(dir.isEmpty() ? "." : dir, name);
        if (Files.isExecutable(p)) {
          return p;
        }
      }
    }
    return null;
  }

  @Test
  void shouldShowTheNewEpochAndItsTasksMovingToVerifiedWithoutReloading() throws Exception {
    LocalNodes nodes = plane.nodes().orElseThrow();
    List<Member> members = new ArrayList<>();
    for (LocalNodes.Node n : nodes.nodes()) {
      if (!nodes.spares().contains(n)) {
        members.add(Member.of(n.id(), n.zone()));
      }
    }
    try (ControlPlaneAdmin admin = ControlPlaneAdmin.connect(plane.bootstrapServers(), plane.topics(),
        Duration.ofSeconds(10))) {
      admin.send(event(MembershipAction.INIT, "").setInitialMembers(EpochRecords.specs(members)).setVnodes(16)
          .setReplicas(3).build());
      browser.get(dashboard.url());
      ((JavascriptExecutor) browser).executeScript("window.notReloaded = true;");
      await("the page shows epoch 1 published").atMost(Duration.ofSeconds(60))
          .until(() -> "1".equals(browser.findElement(By.id("published")).getAttribute("data-epoch")));
      assertThat(browser.findElements(By.cssSelector("#nodes tr[data-health=up]"))).as("nodes up").hasSize(5);

      load(nodes, members);
      LocalNodes.Node spare = nodes.spares().get(0);
      admin.send(event(MembershipAction.JOIN, spare.id()).setZone(spare.zone()).setWeight(1.0).build());

      TreeSet<Integer> verifiedSeen = new TreeSet<>();
      boolean[] inFlightSeen = {false};
      boolean[] unfinishedSeen = {false};
      Path shot = Path.of("target", "dashboard.png");
      await("the page shows epoch 2 PUBLISHED on its timeline").atMost(Duration.ofSeconds(120))
          .pollInterval(Duration.ofMillis(200)).until(() -> {
            // One script reads the whole DOM state at once: the page re-renders while a test reads it.
            @SuppressWarnings("unchecked")
            Map<String, Object> page = (Map<String, Object>) ((JavascriptExecutor) browser).executeScript(
                "const v = document.querySelector('#inflight-counts span[data-state=VERIFIED]');"
                    + "return {inFlight: document.getElementById('inflight').dataset.epoch,"
                    + " verified: v ? Number(v.dataset.count) : 0,"
                    + " tasks: document.querySelectorAll('#tasks tbody tr').length,"
                    + " published: document.querySelector(\"#epochs tr[data-epoch='2'][data-last=PUBLISHED]\") !== null};");
            if ("2".equals(page.get("inFlight"))) {
              inFlightSeen[0] = true;
              int count = ((Number) page.get("verified")).intValue();
              if (count < ((Number) page.get("tasks")).intValue()) {
                unfinishedSeen[0] = true;
              }
              if (count > 0 && verifiedSeen.stream().noneMatch(n -> n > 0)) {
                Files.createDirectories(shot.getParent());
                Files.copy(((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE).toPath(), shot,
                    StandardCopyOption.REPLACE_EXISTING);
              }
              verifiedSeen.add(count);
            }
            return Boolean.TRUE.equals(page.get("published"));
          });
      System.out.println("DashboardIT: VERIFIED counts the page showed for epoch 2: " + verifiedSeen
          + "; screenshot " + shot.toAbsolutePath());
      assertThat(inFlightSeen[0]).as("the page showed epoch 2 in flight").isTrue();
      assertThat(unfinishedSeen[0]).as("the page showed tasks of epoch 2 not verified yet").isTrue();
      assertThat(verifiedSeen).as("VERIFIED counts the page showed while epoch 2 was in flight")
          .anyMatch(n -> n > 0);
      assertThat(((JavascriptExecutor) browser).executeScript("return window.notReloaded === true;"))
          .as("the page updated in place, never reloaded").isEqualTo(true);
      assertThat(browser.findElement(By.cssSelector("#nodes tr[data-node='" + spare.id() + "']"))
          .getAttribute("data-role")).isEqualTo("member");
      assertThat(browser.findElement(By.id("workers")).getText()).contains(plane.worker().orElseThrow().config()
          .workerId());
      await("the ring drawn for epoch 2").atMost(Duration.ofSeconds(10))
          .until(() -> browser.findElement(By.id("legend")).getText().contains(spare.id()));
      // The nodes' view of the ring reports to the transition barrier: the page lists it, live, at the new epoch.
      await("the nodes' view listed among the participants at epoch 2").atMost(Duration.ofSeconds(30))
          .until(() -> browser.findElements(By.cssSelector("#participants tr[data-participant='node/local-plane']"))
              .stream().anyMatch(row -> row.getText().contains("node 2 FINAL held")));
    }
  }

  /** Keys on the replicas of epoch 1, so that the join has bytes to copy at the throttled rate. */
  private static void load(LocalNodes nodes, List<Member> members) {
    RingSnapshot ring = RingSnapshot.builder().clusterId(CLUSTER).epoch(1).vnodes(16).replicas(3).members(members)
        .build();
    Map<String, List<Entry>> byNode = new LinkedHashMap<>();
    Random random = new Random(7);
    for (int i = 0; i < 3_000; i++) {
      byte[] key = ("k-" + i).getBytes(StandardCharsets.UTF_8);
      byte[] value = new byte[1_000];
      random.nextBytes(value);
      for (String node : ring.replicasOf(key).ids()) {
        byNode.computeIfAbsent(node, n -> new ArrayList<>()).add(Entry.of(key, value));
      }
    }
    byNode.forEach((node, entries) -> nodes.admin(node).apply(entries));
  }

  private static MembershipEvent.Builder event(MembershipAction action, String node) {
    return MembershipEvent.newBuilder().setClusterId(CLUSTER).setNodeId(node).setAction(action)
        .setRequestId(UUID.randomUUID().toString()).setRequestedBy("dashboard-it")
        .setTimestampMillis(System.currentTimeMillis());
  }
}
