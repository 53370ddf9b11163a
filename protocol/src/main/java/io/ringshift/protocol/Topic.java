package io.ringshift.protocol;

import java.util.Map;
import java.util.Objects;
import org.apache.kafka.common.serialization.Serde;

/**
 * One Kafka topic, described once: its name, the serdes of its keys and values, and the configs it is created
 * with.
 *
 * @param name topic name
 * @param keySerde serde of the record keys
 * @param valueSerde serde of the record values
 * @param configs topic configs applied when the topic is created (cleanup policy, retention)
 * @param <K> key type
 * @param <V> value type
 */
public record Topic<K, V>(String name, Serde<K> keySerde, Serde<V> valueSerde, Map<String, String> configs) {
  public Topic {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(keySerde, "keySerde");
    Objects.requireNonNull(valueSerde, "valueSerde");
    configs = Map.copyOf(configs);
  }
}
