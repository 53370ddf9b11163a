package io.ringshift.cli.internal.worker;

import io.ringshift.cli.BadInputException;
import io.ringshift.cli.KafkaUnavailableException;
import io.ringshift.cli.internal.control.ByteSizeConverter;
import io.ringshift.cli.internal.control.KafkaOptions;
import io.ringshift.cli.internal.control.LatestRecords;
import io.ringshift.protocol.Topics;
import io.ringshift.ring.ByteUnits;
import io.ringshift.schemas.avro.WorkerBudgets;
import io.ringshift.worker.WorkerConfig;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.StringSerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringshift budgets}: shows or sets a worker group's shared byte budgets on {@code ring.worker-budgets}
 * (docs/worker.md, "Group budgets").
 */
@Command(
    name = "budgets",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Shows or sets the byte-rate budgets a whole group of migration workers shares: per source node (all the "
          + "group's workers together read at most this from one node) and per zone link (copied from one zone to "
          + "another). The running workers of the group take them within a second and divide each budget equally "
          + "among the workers copying over it right now. A rate of 0 is unlimited.",
      "Without a setting option it prints the budgets in force. With one, it changes only what it names and keeps "
          + "the rest: --source NODE=0 exempts that node (unlimited), --source NODE=default removes its override so "
          + "the per-source budget applies again (the same for --zone-link), --clear-overrides removes them all. "
          + "The record is replaced as a whole: of two runs at the same time, the last one written wins."
    })
public final class BudgetsCommand implements Callable<Integer> {
  private static final Pattern NODE = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
  private static final Pattern ZONE = Pattern.compile("[A-Za-z0-9._:-]{1,64}");
  private static final Pattern GROUP = Pattern.compile("[A-Za-z0-9._-]{1,249}");
  /** The value that removes an override. */
  private static final String DEFAULT = "default";
  /** An override to remove, in the parsed maps. */
  private static final long REMOVE = -1;

  @Spec private CommandSpec spec;

  @Option(names = "--group-id", paramLabel = "GROUP", defaultValue = WorkerConfig.DEFAULT_GROUP_ID,
      description = "The worker group (the workers' --group-id; default: ${DEFAULT-VALUE}).")
  private String groupId;

  @Option(names = "--per-source-bytes-per-second", paramLabel = "SIZE", converter = ByteSizeConverter.class,
      description = "What the whole group may read per second from any one source node (0: unlimited).")
  private Long perSource;

  @Option(names = "--per-zone-link-bytes-per-second", paramLabel = "SIZE", converter = ByteSizeConverter.class,
      description = "What the whole group may copy per second from one zone to another (every ordered pair of zones "
          + "is a link, a zone to itself included; 0: unlimited).")
  private Long perZoneLink;

  @Option(names = "--source", paramLabel = "NODE=SIZE",
      description = "A source node's own budget instead of the per-source one (repeatable; SIZE 0: unlimited; "
          + "'default' removes the override).")
  private List<String> sources = new ArrayList<>();

  @Option(names = "--zone-link", paramLabel = "FROM>TO=SIZE",
      description = "A zone link's own budget instead of the per-link one, for example az-1>az-2=50MiB (repeatable; "
          + "quote it in a shell; 'default' removes the override).")
  private List<String> links = new ArrayList<>();

  @Option(names = "--clear-overrides", description = "Drop every --source and --zone-link budget set before.")
  private boolean clearOverrides;

  @Mixin private KafkaOptions kafka;

  @Override
  public Integer call() {
    if (groupId == null || !GROUP.matcher(groupId).matches()) {
      throw new BadInputException("--group-id was \"" + groupId + "\"; a worker group id is 1 to 249 letters, digits, "
          + "'.', '_' or '-' (the workers' --group-id)");
    }
    checkRate("--per-source-bytes-per-second", perSource);
    checkRate("--per-zone-link-bytes-per-second", perZoneLink);
    Map<String, Long> sourceChanges = parse("--source", sources, NODE, "a node id");
    Map<String, Long> linkChanges = parseLinks(links);
    PrintWriter out = spec.commandLine().getOut();
    Topics topics = kafka.topics();
    WorkerBudgets current = read(topics);
    boolean changes = perSource != null || perZoneLink != null || !sourceChanges.isEmpty() || !linkChanges.isEmpty()
        || clearOverrides;
    if (!changes) {
      out.println(current == null ? "worker group " + groupId + " has no budgets: each worker's own limits apply "
          + "(ring.worker-budgets at " + kafka.bootstrap() + ")" : describe(current));
      return 0;
    }
    Map<String, Long> sourceBudgets = new TreeMap<>();
    Map<String, Long> linkBudgets = new TreeMap<>();
    if (current != null && !clearOverrides) {
      current.getSourceBytesPerSecond().forEach((k, v) -> sourceBudgets.put(k.toString(), v));
      current.getZoneLinkBytesPerSecond().forEach((k, v) -> linkBudgets.put(k.toString(), v));
    }
    apply(sourceBudgets, sourceChanges);
    apply(linkBudgets, linkChanges);
    WorkerBudgets next = WorkerBudgets.newBuilder()
        .setGroupId(groupId)
        .setPerSourceBytesPerSecond(perSource != null ? perSource : current == null ? 0
            : current.getPerSourceBytesPerSecond())
        .setSourceBytesPerSecond(new TreeMap<>(sourceBudgets))
        .setPerZoneLinkBytesPerSecond(perZoneLink != null ? perZoneLink : current == null ? 0
            : current.getPerZoneLinkBytesPerSecond())
        .setZoneLinkBytesPerSecond(new TreeMap<>(linkBudgets))
        .setTimestampMillis(System.currentTimeMillis())
        .build();
    write(topics, next);
    out.println("set " + describe(next));
    return 0;
  }

  /** Sets, or removes ({@link #REMOVE}), each changed override. */
  private static void apply(Map<String, Long> overrides, Map<String, Long> changes) {
    changes.forEach((key, rate) -> {
      if (rate == REMOVE) {
        overrides.remove(key);
      } else {
        overrides.put(key, rate);
      }
    });
  }

  private static void checkRate(String option, Long rate) {
    if (rate != null && rate < 0) {
      throw new BadInputException(option + " was " + rate + "; a rate is >= 0 bytes per second (0: unlimited)");
    }
  }

  /** {@code KEY=SIZE} items into a map; the key must match {@code key}. */
  private static Map<String, Long> parse(String option, List<String> items, Pattern key, String what) {
    Map<String, Long> parsed = new TreeMap<>();
    for (String item : items) {
      int eq = item.lastIndexOf('=');
      if (eq <= 0) {
        throw new BadInputException(option + " was \"" + item + "\"; it must be KEY=SIZE, for example node-07=10MiB");
      }
      String name = item.substring(0, eq).strip();
      if (!key.matcher(name).matches()) {
        throw new BadInputException(option + " was \"" + item + "\"; \"" + name + "\" is not " + what);
      }
      if (parsed.put(name, size(option, item, item.substring(eq + 1).strip())) != null) {
        throw new BadInputException(option + " names " + name + " twice (\"" + item + "\"); give each once");
      }
    }
    return parsed;
  }

  private static Map<String, Long> parseLinks(List<String> items) {
    Map<String, Long> parsed = new TreeMap<>();
    for (String item : items) {
      int eq = item.lastIndexOf('=');
      int arrow = item.indexOf('>');
      if (eq <= 0 || arrow <= 0 || arrow > eq) {
        throw new BadInputException("--zone-link was \"" + item + "\"; it must be FROM>TO=SIZE, for example "
            + "az-1>az-2=50MiB");
      }
      String from = item.substring(0, arrow).strip();
      String to = item.substring(arrow + 1, eq).strip();
      for (String zone : List.of(from, to)) {
        if (!ZONE.matcher(zone).matches()) {
          throw new BadInputException("--zone-link was \"" + item + "\"; \"" + zone + "\" is not a zone name "
              + "(letters, digits, '.', '_', ':' and '-')");
        }
      }
      if (parsed.put(from + ">" + to, size("--zone-link", item, item.substring(eq + 1).strip())) != null) {
        throw new BadInputException("--zone-link names " + from + ">" + to + " twice (\"" + item + "\"); give each "
            + "once");
      }
    }
    return parsed;
  }

  private static long size(String option, String item, String text) {
    if (DEFAULT.equals(text)) {
      return REMOVE;
    }
    long bytes;
    try {
      bytes = ByteUnits.parse(text);
    } catch (IllegalArgumentException e) {
      throw new BadInputException(option + " was \"" + item + "\": " + e.getMessage());
    }
    if (bytes < 0) {
      throw new BadInputException(option + " was \"" + item + "\"; a rate is >= 0 bytes per second (0: unlimited)");
    }
    return bytes;
  }

  private String describe(WorkerBudgets b) {
    StringBuilder s = new StringBuilder("budgets of worker group " + b.getGroupId() + ": per source node "
        + rate(b.getPerSourceBytesPerSecond()) + ", per zone link " + rate(b.getPerZoneLinkBytesPerSecond()));
    new TreeMap<>(b.getSourceBytesPerSecond()).forEach((k, v) -> s.append("; source ").append(k).append(' ')
        .append(rate(v)));
    new TreeMap<>(b.getZoneLinkBytesPerSecond()).forEach((k, v) -> s.append("; zone link ").append(k).append(' ')
        .append(rate(v)));
    return s.toString();
  }

  private static String rate(long bytesPerSecond) {
    return bytesPerSecond == 0 ? "unlimited" : ByteUnits.format(bytesPerSecond) + "/s";
  }

  /** The latest budgets of the group on the topic, null when none. */
  private WorkerBudgets read(Topics topics) {
    String topic = topics.workerBudgets().name();
    Map<String, byte[]> latest = LatestRecords.read(kafka, topic, groupId::equals).orElseThrow(() ->
        new BadInputException("Kafka at " + kafka.bootstrap() + " has no topic " + topic + "; create the "
            + "control plane's topics first (ringshift topics create)"));
    byte[] value = latest.get(groupId);
    return value == null ? null : topics.workerBudgets().valueSerde().deserializer().deserialize(topic, value);
  }

  private void write(Topics topics, WorkerBudgets budgets) {
    Properties p = kafka.kafkaProperties().applyTo(new Properties());
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) kafka.timeout().toMillis());
    try (KafkaProducer<String, WorkerBudgets> producer = new KafkaProducer<>(p, new StringSerializer(),
        topics.workerBudgets().valueSerde().serializer())) {
      producer.send(new ProducerRecord<>(topics.workerBudgets().name(), groupId, budgets))
          .get(kafka.timeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException | KafkaException e) {
      throw new KafkaUnavailableException("writing the budgets to " + topics.workerBudgets().name() + " at "
          + kafka.bootstrap() + " failed: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KafkaUnavailableException("interrupted while writing the budgets", e);
    }
  }
}
