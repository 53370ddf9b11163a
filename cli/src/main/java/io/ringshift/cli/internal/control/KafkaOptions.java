package io.ringshift.cli.internal.control;

import io.ringshift.orchestrator.admin.ClusterView;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin.Contents;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin.Part;
import io.ringshift.cli.BadInputException;
import io.ringshift.protocol.KafkaProperties;
import io.ringshift.protocol.Topics;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import picocli.CommandLine.Option;

/** Where the control plane's topics are: the options every command that talks to Kafka shares. */
public final class KafkaOptions {
  /** HOST:PORT, the host a name, an IPv4 address or a bracketed IPv6 address. */
  private static final Pattern ADDRESS = Pattern.compile("(\\[[0-9a-fA-F:.]+]|[A-Za-z0-9._-]+):(\\d{1,5})");

  /** The environment variable that gives {@code --bootstrap} when the option is left out. */
  public static final String BOOTSTRAP_VARIABLE = "RINGSHIFT_BOOTSTRAP";

  @Option(names = "--bootstrap", paramLabel = "HOST:PORT", defaultValue = "${env:" + BOOTSTRAP_VARIABLE + "}",
      description = "Kafka bootstrap address(es), comma-separated, for example 127.0.0.1:9092 (what `ringshift "
          + "dev` prints). Default: the environment variable " + BOOTSTRAP_VARIABLE + ".")
  String bootstrap;

  @Option(names = "--kafka-config", paramLabel = "FILE",
      description = "Kafka client properties (a Java properties file, as Kafka's tools take with --command-config) "
          + "for every Kafka client of the command: security.protocol, sasl.*, ssl.* and the like. The properties "
          + "ringshift sets itself (serializers, groups, transactions, isolation) are refused.")
  Path kafkaConfig;

  @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "5",
      description = "How long to wait for Kafka (connecting, each request, each write; a read gives up when it "
          + "makes no progress for this long). Default: ${DEFAULT-VALUE}.")
  int timeoutSeconds;

  // Hidden: lets tests that share one broker give every test its own topics (docs/cli.md, "Topic prefix").
  @Option(names = "--topic-prefix", hidden = true, paramLabel = "PREFIX", defaultValue = "",
      description = "Prefix of the ring.* topic names.")
  String topicPrefix;

  /** The validated bootstrap address list. */
  public String bootstrap() {
    if (bootstrap == null) {
      throw new BadInputException("no Kafka bootstrap address: give --bootstrap HOST:PORT (for example "
          + "127.0.0.1:9092) or set " + BOOTSTRAP_VARIABLE);
    }
    String value = bootstrap.strip();
    if (value.isEmpty()) {
      throw new BadInputException("--bootstrap was empty; give HOST:PORT, for example 127.0.0.1:9092");
    }
    for (String address : value.split(",", -1)) {
      var m = ADDRESS.matcher(address.strip());
      if (!m.matches()) {
        throw new BadInputException(String.format(Locale.ROOT,
            "--bootstrap was \"%s\"; every address must be HOST:PORT, for example 127.0.0.1:9092", bootstrap));
      }
      int port = Integer.parseInt(m.group(2));
      if (port < 1 || port > 65_535) {
        throw new BadInputException(String.format(Locale.ROOT,
            "--bootstrap was \"%s\"; port %d is not between 1 and 65535", bootstrap, port));
      }
    }
    return value;
  }

  /**
   * The client properties of {@code --kafka-config}, none without it.
   *
   * @throws BadInputException naming the file when it cannot be read, or the property that is not allowed
   */
  public KafkaProperties kafkaProperties() {
    if (kafkaConfig == null) {
      return KafkaProperties.none();
    }
    try {
      return KafkaProperties.load(kafkaConfig);
    } catch (IllegalArgumentException e) {
      throw new BadInputException("--kafka-config: " + e.getMessage());
    }
  }

  public Duration timeout() {
    if (timeoutSeconds < 1 || timeoutSeconds > 3600) {
      throw new BadInputException("--timeout was " + timeoutSeconds + "; it must be between 1 and 3600 seconds");
    }
    return Duration.ofSeconds(timeoutSeconds);
  }

  public Topics topics() {
    if (!topicPrefix.isEmpty() && !topicPrefix.matches("[A-Za-z0-9._-]+")) {
      throw new BadInputException("--topic-prefix was \"" + topicPrefix + "\"; a topic name allows only letters, "
          + "digits, '.', '_' and '-'");
    }
    return Topics.withPrefix(topicPrefix);
  }

  /**
   * Reads {@code parts} of the control plane and returns cluster {@code clusterId} as they describe it; records that
   * do not decode are reported on {@code err} and skipped.
   *
   * @throws BadInputException when the cluster has no epoch there
   */
  ClusterView view(String clusterId, Set<Part> parts, int rejectedLimit, PrintWriter err) {
    return view(clusterId, read(parts, err), rejectedLimit);
  }

  /** What a read of {@code parts} found, with the address read from; undecodable records reported on {@code err}. */
  record Read(Contents contents, String address) {}

  Read read(Set<Part> parts, PrintWriter err) {
    Contents contents;
    String address;
    try (ControlPlaneAdmin client = connect()) {
      contents = client.read(parts);
      address = client.bootstrap();
    }
    Requests.warnUnreadable(contents.unreadable(), err);
    return new Read(contents, address);
  }

  /** Cluster {@code clusterId} as {@code read} describes it. @throws BadInputException when it has no epoch there */
  static ClusterView view(String clusterId, Read read, int rejectedLimit) {
    Contents contents = read.contents();
    String address = read.address();
    ClusterView view = ClusterView.of(clusterId, contents, rejectedLimit);
    if (!view.exists()) {
      String rejections = view.rejectedTotal() == 0 ? ""
          : "; its latest rejected request: " + view.rejected().get(view.rejected().size() - 1).getReason();
      throw new BadInputException("cluster " + clusterId + " has no epoch at " + address
          + " (declare it with `ringshift init`)" + rejections);
    }
    return view;
  }

  /** Validates every option and connects. */
  ControlPlaneAdmin connect() {
    String address = bootstrap();
    Duration timeout = timeout();
    return ControlPlaneAdmin.connect(address, kafkaProperties(), topics(), timeout);
  }
}
