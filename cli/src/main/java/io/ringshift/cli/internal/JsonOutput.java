package io.ringshift.cli.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;

/** Pretty JSON for command output: two-space indents, {@code "key": value}, one line per array element. */
public final class JsonOutput {
  // Non-ASCII is escaped so that the output is the same bytes whatever the terminal's encoding is.
  private static final ObjectMapper MAPPER =
      JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

  private static final DefaultPrettyPrinter PRETTY;

  static {
    DefaultIndenter indenter = new DefaultIndenter("  ", "\n");
    DefaultPrettyPrinter printer = new DefaultPrettyPrinter(
        Separators.createDefaultInstance()
            .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
            .withArrayEmptySeparator("")
            .withObjectEmptySeparator(""));
    printer.indentArraysWith(indenter);
    printer.indentObjectsWith(indenter);
    PRETTY = printer;
  }

  private JsonOutput() {}

  public static ObjectNode object() {
    return MAPPER.createObjectNode();
  }

  /** A record (of plain values, lists, maps and records) as a tree, field names from its components. */
  public static ObjectNode tree(Object value) {
    return MAPPER.valueToTree(value);
  }

  public static void print(PrintWriter out, ObjectNode node) {
    try {
      out.print(MAPPER.writer(PRETTY).writeValueAsString(node));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a tree of plain values always serialises", e);
    }
    out.print('\n');
    out.flush();
  }
}
