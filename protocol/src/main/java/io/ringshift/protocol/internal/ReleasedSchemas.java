package io.ringshift.protocol.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;

/**
 * The released versions of each record schema, kept as resources {@code
 * io/ringshift/protocol/released/<Record>/v1.avsc, v2.avsc, ...} numbered without gaps. A released file is never
 * edited: readers need it to resolve bytes written by that version, and the compatibility test checks the
 * current schema against every one of them.
 */
public final class ReleasedSchemas {
  private static final String ROOT = "/io/ringshift/protocol/released/";

  private ReleasedSchemas() {}

  /** Every released version of the record, oldest first; empty if none was released yet. */
  public static List<Schema> of(String recordName) {
    List<Schema> schemas = new ArrayList<>();
    for (int version = 1; ; version++) {
      String resource = resource(recordName, version);
      try (InputStream in = ReleasedSchemas.class.getResourceAsStream(resource)) {
        if (in == null) {
          return List.copyOf(schemas);
        }
        // A fresh parser per file: each released file is a self-contained schema that reuses the same names.
        schemas.add(new Schema.Parser().parse(in));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read the released schema " + resource, e);
      }
    }
  }

  /** Class-path resource name of one released version. */
  public static String resource(String recordName, int version) {
    return ROOT + recordName + "/v" + version + ".avsc";
  }
}
