package io.ringshift.orchestrator.admin;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.ringshift.ring.Member;
import io.ringshift.ring.MemberState;
import io.ringshift.ring.RingException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Reads a members file: a JSON array of {@code {"id": "node-001", "zone": "az-1", "weight": 1.0, "state":
 * "ACTIVE"}} objects, where weight (default 1) and state (default ACTIVE) are optional.
 *
 * <p>The parser streams the array so that every error can name the member's index and its line and column;
 * each member object is then read as a tree and checked field by field. Unknown fields are refused rather than
 * ignored, because a misspelt {@code "wieght"} silently defaulting to 1 would place the wrong share of keys.
 * The member rules themselves are the ring's ({@link Member}); their messages are passed through.
 */
public final class MembersFile {
  private static final List<String> FIELD_ORDER = List.of("id", "zone", "weight", "state");
  private static final Set<String> FIELDS = Set.copyOf(FIELD_ORDER);

  private static final ObjectMapper MAPPER =
      JsonMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

  private MembersFile() {}

  /**
   * The members of a members file's bytes, in file order.
   *
   * @param source names the file in messages
   * @throws AdminException {@link AdminException.Reason#BAD_REQUEST} naming the source, the line and column, the
   *     member and the problem
   */
  public static List<Member> parse(String source, byte[] bytes) {
    List<Member> members = new ArrayList<>();
    Map<String, Integer> indexById = new HashMap<>();
    try (JsonParser parser = MAPPER.createParser(bytes)) {
      JsonToken token = parser.nextToken();
      if (token == null) {
        throw AdminException.badRequest(source + " is empty; expected a JSON array of members");
      }
      if (token != JsonToken.START_ARRAY) {
        throw fail(source, parser.currentTokenLocation(),
            "expected a JSON array of members, found " + describe(token));
      }
      int index = 0;
      while ((token = parser.nextToken()) != JsonToken.END_ARRAY) {
        JsonLocation at = parser.currentTokenLocation();
        String where = "member[" + index + "]";
        if (token != JsonToken.START_OBJECT) {
          throw fail(source, at, where + " must be a JSON object, found " + describe(token));
        }
        Member member = toMember(source, at, where, MAPPER.readTree(parser));
        Integer previous = indexById.putIfAbsent(member.id(), index);
        if (previous != null) {
          throw fail(source, at, String.format(Locale.ROOT,
              "%s: member id \"%s\" appears twice (member[%d] and member[%d]); member ids must be unique",
              where, member.id(), previous, index));
        }
        members.add(member);
        index++;
      }
      JsonToken trailing = parser.nextToken();
      if (trailing != null) {
        throw fail(source, parser.currentTokenLocation(),
            "expected the end of the file after the members array, found " + describe(trailing));
      }
    } catch (JsonProcessingException e) {
      throw fail(source, e.getLocation(), "malformed JSON: " + withoutSourceDescription(e.getOriginalMessage()));
    } catch (IOException e) {
      throw new AdminException(AdminException.Reason.BAD_REQUEST, "cannot read " + source + ": " + e.getMessage(), e);
    }
    if (members.isEmpty()) {
      throw AdminException.badRequest(source + ": members was empty; a ring needs at least one member");
    }
    return members;
  }

  private static Member toMember(String source, JsonLocation at, String where, JsonNode node) {
    for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!FIELDS.contains(name)) {
        throw fail(source, at, String.format(Locale.ROOT,
            "%s: unknown field \"%s\"; a member has the fields %s", where, name, String.join(", ", FIELD_ORDER)));
      }
    }
    String id = text(source, at, where, node, "id");
    String zone = text(source, at, where, node, "zone");
    double weight = 1.0;
    JsonNode weightNode = node.get("weight");
    if (weightNode != null && !weightNode.isNull()) {
      if (!weightNode.isNumber()) {
        throw fail(source, at, where + ": weight must be a JSON number, found " + describe(weightNode));
      }
      weight = weightNode.doubleValue();
    }
    MemberState state = MemberState.ACTIVE;
    String stateName = text(source, at, where, node, "state");
    if (stateName != null) {
      try {
        state = MemberState.valueOf(stateName);
      } catch (IllegalArgumentException e) {
        throw fail(source, at, String.format(Locale.ROOT, "%s: state was \"%s\"; state must be one of %s",
            where, stateName, Arrays.toString(MemberState.values())));
      }
    }
    try {
      return new Member(id, zone, weight, state);
    } catch (RingException e) {
      throw fail(source, at, where + ": " + e.getMessage());
    }
  }

  /** The field as a string, or null when absent or JSON null (the ring then says which field is missing). */
  private static String text(String source, JsonLocation at, String where, JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      return null;
    }
    if (!value.isTextual()) {
      throw fail(source, at, where + ": " + field + " must be a JSON string, found " + describe(value));
    }
    return value.textValue();
  }

  /**
   * Jackson names the source inside nested locations ("[Source: REDACTED (...); line: 1, column: 1]"); the
   * message already starts with the path, so only the line and column are kept.
   */
  static String withoutSourceDescription(String message) {
    String marker = "[Source: ";
    int at = message.indexOf(marker);
    while (at >= 0) {
      int line = message.indexOf("line: ", at);
      if (line < 0) {
        break;
      }
      message = message.substring(0, at + 1) + message.substring(line);
      at = message.indexOf(marker, at + 1);
    }
    return message;
  }

  private static AdminException fail(String source, JsonLocation at, String message) {
    if (at == null || at.getLineNr() < 1) {
      return AdminException.badRequest(source + ": " + message);
    }
    return AdminException.badRequest(String.format(Locale.ROOT,
        "%s: line %d, column %d: %s", source, at.getLineNr(), at.getColumnNr(), message));
  }

  private static String describe(JsonToken token) {
    switch (token) {
      case START_OBJECT:
        return "an object";
      case START_ARRAY:
        return "an array";
      case VALUE_STRING:
        return "a string";
      case VALUE_NUMBER_INT:
      case VALUE_NUMBER_FLOAT:
        return "a number";
      case VALUE_TRUE:
      case VALUE_FALSE:
        return "a boolean";
      case VALUE_NULL:
        return "null";
      default:
        return token.asString() == null ? token.name() : "'" + token.asString() + "'";
    }
  }

  private static String describe(JsonNode node) {
    switch (node.getNodeType()) {
      case STRING:
        return "the string \"" + node.textValue() + "\"";
      case NUMBER:
        return "the number " + node.asText();
      case BOOLEAN:
        return "the boolean " + node.asText();
      case ARRAY:
        return "an array";
      case OBJECT:
        return "an object";
      default:
        return node.getNodeType().name().toLowerCase(Locale.ROOT);
    }
  }
}
