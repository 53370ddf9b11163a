package io.ringshift.cli.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.PrintWriter;

/**
 * Pretty JSON for command output: two-space indents, {@code "key": value}, one line per array element. A command
 * prints a record made for its output: the fields are the record's components, in declaration order, and a null
 * component is printed as {@code null}.
 */
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

  /** Prints a record of plain values, lists, maps and records, then a newline. */
  public static void print(PrintWriter out, Object value) {
    try {
      out.print(MAPPER.writer(PRETTY).writeValueAsString(value));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a record of plain values always serialises", e);
    }
    out.print('\n');
    out.flush();
  }
}
